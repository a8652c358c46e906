"""One key per example from jax.random.split, read as keys[i] in a loop filling a buffer: the same numbers
under jax.vmap (the corpus compares them)."""
import jax
import jax.numpy as jnp


def dropout_masks(key, n, p: float = 0.5):
    keys = jax.random.split(key, n)
    masks = jax.vmap(jax.random.bernoulli, in_axes=(0, None, None))(keys, p, (6,))
    return masks
