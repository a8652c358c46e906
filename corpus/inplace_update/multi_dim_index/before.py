import jax.numpy as jnp


def board(value):
    grid = jnp.zeros((3, 3))
    grid[0, 1] = value
    grid[2, :] = 1.0
    grid[1, ...] = -value
    grid[:, 2] = grid[:, 0] + 7.0
    return grid
