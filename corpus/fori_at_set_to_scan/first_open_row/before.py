import jax.numpy as jnp
from jax import lax


def mask_closed_rows(grid, is_open):
    """Zero the rows of `grid` above the first open row (`is_open` holds one flag per row)."""
    first_open = jnp.argmax(is_open)

    def close_row(i, grid):
        grid = grid.at[i, :].set(0)
        return grid

    return lax.fori_loop(0, first_open, close_row, grid)
