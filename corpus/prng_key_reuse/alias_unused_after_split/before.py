import jax


def sample(key):
    # `seed_key` keeps the incoming key for reporting only: it is never drawn from after the split.
    seed_key = key
    key, subkey = jax.random.split(key)
    x = jax.random.normal(subkey, (3,))
    y = jax.random.uniform(key, (3,))
    return x, y, jax.random.key_data(seed_key)
