import jax
import jax.numpy as jnp


@jax.jit
def total(tree):
    if isinstance(tree, dict):
        leaves = list(tree.values())
    elif isinstance(tree, (list, tuple)):
        leaves = list(tree)
    else:
        leaves = [tree]
    return sum(jnp.sum(leaf) for leaf in leaves)
