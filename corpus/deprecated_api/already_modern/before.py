"""Code already on the current APIs: nothing to do."""

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def step(params, n):
    params = jax.tree.map(lambda p: p * n, params)
    leaves, treedef = jax.tree.flatten(params)
    leaves = [leaf.at[0].set(0.0) for leaf in leaves]
    return jax.tree_util.tree_map(jnp.sum, jax.tree.unflatten(treedef, leaves))
