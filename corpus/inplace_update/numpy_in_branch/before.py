import jax.numpy as jnp
import numpy as np


def first_to_one(on_host):
    x = jnp.zeros(3)
    if on_host:
        x = np.zeros(3)
    x[0] = 1.0
    return x
