"""jax.experimental.enable_x64 / disable_x64 (removed in JAX 0.9.0) become jax.enable_x64(True / False)."""

import jax
import jax.numpy as jnp
from jax.experimental import disable_x64


def widen(x):
    with jax.experimental.enable_x64():
        wide = jnp.asarray(x, dtype=jnp.float64) / 3
    with disable_x64():
        narrow = jnp.asarray(x) / 3
    return wide, narrow
