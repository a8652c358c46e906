import jax.numpy as jnp


def shift(x, k):
    return jnp.roll(x, k)
