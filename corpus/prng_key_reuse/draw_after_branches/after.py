import jax


def sample(key, gaussian):
    if gaussian:
        key, subkey = jax.random.split(key)
        a = jax.random.normal(subkey, (4,))
    else:
        key, subkey_2 = jax.random.split(key)
        a = jax.random.uniform(subkey_2, (4,))
    b = jax.random.normal(key, (4,))
    return a, b
