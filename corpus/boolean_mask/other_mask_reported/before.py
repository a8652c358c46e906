"""Weights selected by another array's mask: the mask may broadcast against x (a row mask of a matrix selects
rows, jnp.where would pair it with columns), so the masked sum is reported, not rewritten."""

import jax


@jax.jit
def selected_total(weights, scores):
    return weights[scores > 0.5].sum()
