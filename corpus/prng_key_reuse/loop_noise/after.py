import jax
import jax.numpy as jnp
from jax import random


def noisy_walk(x, key, steps):
    path = []
    for _ in range(steps):
        key, subkey = random.split(key)
        x = x + 0.1 * random.normal(subkey, x.shape)  # the same step every iteration
        path.append(x)
    return jnp.stack(path)
