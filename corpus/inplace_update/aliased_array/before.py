import jax.numpy as jnp


def both(v):
    x = jnp.zeros(3)
    y = x
    x[0] = v
    return x, y
