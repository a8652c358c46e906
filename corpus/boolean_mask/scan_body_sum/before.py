"""A lax.scan body traces its carry and rows: the masked sum of each row fails there too."""

import jax
import jax.numpy as jnp


def positive_row_sums(rows):
    def step(total, row):
        kept = row[row >= 0.0].sum()
        return total + kept, kept

    return jax.lax.scan(step, 0.0, rows)
