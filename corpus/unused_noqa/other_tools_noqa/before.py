import jax.numpy as jnp
from jax import numpy  # noqa: F401


def scale(x, factor=2.0):  # noqa
    return x * factor  # noqa: E501, ANN001
