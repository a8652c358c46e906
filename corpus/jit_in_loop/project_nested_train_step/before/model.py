import jax.numpy as jnp


def loss(params, x):
    return jnp.mean((x @ params - 1.0) ** 2)
