import jax.numpy as jnp


def loss(params, x):
    return jnp.mean((jnp.tanh(x * params) - 0.5) ** 2)
