import jax.numpy as jnp


def board(value):
    grid = jnp.zeros((3, 3))
    grid = grid.at[0, 1].set(value)
    grid = grid.at[2, :].set(1.0)
    grid = grid.at[1, ...].set(-value)
    grid = grid.at[:, 2].set(grid[:, 0] + 7.0)
    return grid
