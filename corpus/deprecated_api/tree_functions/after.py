"""Top-level tree functions, removed in JAX 0.6.0, reached through an aliased import and through `jax.`."""

import jax
import jax.numpy as jnp


def scaled_norm(params, scale):
    scaled = jax.tree.map(lambda p: p * scale, params)
    leaves = jax.tree.leaves(scaled)
    flat, treedef = jax.tree.flatten(scaled)
    sums = jax.tree.unflatten(treedef, [jnp.sum(leaf) for leaf in flat])
    total = jax.tree.reduce(lambda a, b: a + b, sums)
    return total + sum(jnp.sum(leaf**2) for leaf in leaves)
