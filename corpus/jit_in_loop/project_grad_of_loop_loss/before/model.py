import jax.numpy as jnp


def squared(params, x):
    return jnp.mean((jnp.tanh(x * params) - 0.5) ** 2)


def absolute(params, x):
    return jnp.mean(jnp.abs(jnp.tanh(x * params) - 0.5))
