import jax


def encode(key, x):
    noise = jax.random.normal(key, x.shape)
    dropout_key = key  # named for the dropout below, but `key` was already drawn from
    keep = jax.random.bernoulli(dropout_key, 0.5, x.shape)
    return x + noise, keep, jax.random.bernoulli(key, 0.5, x.shape)
