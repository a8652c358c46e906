"""index_update converted a NumPy input with jnp.asarray; `.at` exists only on JAX arrays, so the rewrite keeps
the conversion where the input may be NumPy (a numpy call, or a name bound to one)."""

import jax
import numpy as onp


def one_hot_plus(d, i):
    base = onp.zeros(d)
    hot = jax.ops.index_update(base, i, 1.0)
    return hot + jax.ops.index_add(onp.ones(d), 0, 2.0)
