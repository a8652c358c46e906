"""One key per example from jax.random.split, read as keys[i] in a loop filling a buffer: the same numbers
under jax.vmap (the corpus compares them)."""
import jax
import jax.numpy as jnp


def dropout_masks(key, n, p: float = 0.5):
    keys = jax.random.split(key, n)
    masks = jnp.zeros((n, 6), dtype=bool)
    for i in range(n):
        masks = masks.at[i].set(jax.random.bernoulli(keys[i], p, (6,)))
    return masks
