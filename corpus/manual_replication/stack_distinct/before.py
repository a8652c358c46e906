import jax.numpy as jnp


def pair(a, b):
    return jnp.stack([a, b] * 2)
