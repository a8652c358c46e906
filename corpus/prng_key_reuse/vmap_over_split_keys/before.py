import jax
from jax import random


def batch_samples(key, n):
    # The reference's pattern for parallel sampling: one split into n keys, each key used once by vmap.
    keys = random.split(key, num=n)
    return jax.vmap(lambda k: random.normal(k, shape=(4,)))(keys)
