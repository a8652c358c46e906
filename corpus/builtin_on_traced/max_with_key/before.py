import jax
import jax.numpy as jnp


@jax.jit
def largest_leaf(params):
    leaves = jax.tree.leaves(params)
    biggest = max(leaves, key=lambda leaf: leaf.size)
    return jnp.sum(biggest)
