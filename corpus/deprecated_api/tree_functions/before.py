"""Top-level tree functions, removed in JAX 0.6.0, reached through an aliased import and through `jax.`."""

import jax
import jax.numpy as jnp
from jax import tree_leaves, tree_map as tm


def scaled_norm(params, scale):
    scaled = tm(lambda p: p * scale, params)
    leaves = tree_leaves(scaled)
    flat, treedef = jax.tree_flatten(scaled)
    sums = jax.tree_unflatten(treedef, [jnp.sum(leaf) for leaf in flat])
    total = jax.tree_reduce(lambda a, b: a + b, sums)
    return total + sum(jnp.sum(leaf**2) for leaf in leaves)
