"""A size computed from the data cannot be made static: reported, with no fix."""

import jax
import jax.numpy as jnp


@jax.jit
def count_positive(x):
    n = jnp.sum(x > 0)
    return jnp.ones((n,))
