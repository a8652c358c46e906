"""jax.tree_util.tree_multimap (removed in JAX 0.3.16) is tree_map."""

import jax.numpy as jnp
from jax.tree_util import tree_leaves
import jax


def add_trees(a, b):
    summed = jax.tree_util.tree_map(lambda u, v: u + v, a, b)
    return jnp.concatenate(tree_leaves(summed))
