"""The jax.ops.index_* functions (removed in JAX 0.3.2) become `.at[]` updates."""

import jax
import jax.numpy as jnp


def update(x, i):
    y = jax.ops.index_update(x, jax.ops.index[i], 10.0)
    y = jax.ops.index_add(y, jax.ops.index[1:3], 1.0)
    z = jax.ops.index_mul(y * 2, 0, 3.0)
    z = jax.ops.index_min(z, jax.ops.index[-1], 0.5)
    return jax.ops.index_max(z + 1, jax.ops.index[::2], 5.0, indices_are_sorted=True)
