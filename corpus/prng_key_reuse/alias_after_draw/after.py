import jax


def encode(key, x):
    key, subkey = jax.random.split(key)
    noise = jax.random.normal(subkey, x.shape)
    dropout_key = key  # named for the dropout below, but `key` was already drawn from
    key, subkey_2 = jax.random.split(key)
    keep = jax.random.bernoulli(subkey_2, 0.5, x.shape)
    return x + noise, keep, jax.random.bernoulli(key, 0.5, x.shape)
