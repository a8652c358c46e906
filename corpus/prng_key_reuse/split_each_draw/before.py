import jax.random as random


def sample(key):
    # The reference's pattern: split before every draw.
    key, subkey = random.split(key)
    x = random.normal(subkey, shape=(10,))
    key, subkey = random.split(key)
    y = random.uniform(subkey, shape=(10,))
    return x, y
