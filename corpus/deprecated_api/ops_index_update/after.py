"""The jax.ops.index_* functions (removed in JAX 0.3.2) become `.at[]` updates."""

import jax
import jax.numpy as jnp


def update(x, i):
    y = x.at[i].set(10.0)
    y = y.at[1:3].add(1.0)
    z = (y * 2).at[0].multiply(3.0)
    z = z.at[-1].min(0.5)
    return (z + 1).at[::2].max(5.0, indices_are_sorted=True)
