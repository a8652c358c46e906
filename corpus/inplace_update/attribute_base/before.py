import jax.numpy as jnp
import numpy as np


class Buffer:
    def __init__(self, n):
        self.data = np.zeros(n)

    def put(self, i, v):
        self.data[i] = v
        return jnp.asarray(self.data)


def fill():
    return Buffer(3).put(1, 2.0)
