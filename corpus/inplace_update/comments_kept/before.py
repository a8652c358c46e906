import jax
import jax.numpy as jnp


def layout(a, b):
    table = jnp.zeros((2, 3))
    # the first row holds a
    table[0] = a  # broadcast over the row
    table[
        1, 1:  # skip the first column
    ] = (  # b, shifted
        b + 1.0
    ); total = table.sum()
    return table, total
