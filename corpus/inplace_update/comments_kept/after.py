import jax
import jax.numpy as jnp


def layout(a, b):
    table = jnp.zeros((2, 3))
    # the first row holds a
    table = table.at[0].set(a)  # broadcast over the row
    table = table.at[
        1, 1:  # skip the first column
    ].set(  # b, shifted
        b + 1.0
    ); total = table.sum()
    return table, total
