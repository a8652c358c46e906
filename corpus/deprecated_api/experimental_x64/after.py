"""jax.experimental.enable_x64 / disable_x64 (removed in JAX 0.9.0) become jax.enable_x64(True / False)."""

import jax
import jax.numpy as jnp


def widen(x):
    with jax.enable_x64(True):
        wide = jnp.asarray(x, dtype=jnp.float64) / 3
    with jax.enable_x64(False):
        narrow = jnp.asarray(x) / 3
    return wide, narrow
