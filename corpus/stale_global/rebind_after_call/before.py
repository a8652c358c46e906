"""The reference's example: the jitted function keeps scale = 1.0 after the module sets 2.0."""

import jax
import jax.numpy as jnp

scale = 1.0


@jax.jit
def apply(x):
    return x * scale


first = apply(jnp.ones(2))
scale = 2.0
second = apply(jnp.ones(2))  # still x * 1.0


def results():
    return first, second
