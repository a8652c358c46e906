import jax.numpy as jnp


def rows():
    grid = jnp.zeros((2, 2))
    top = grid[0]
    grid[0, 0] = 5.0
    return top
