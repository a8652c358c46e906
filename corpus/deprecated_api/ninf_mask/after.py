"""Masked attention written with `jnp.NINF` (NumPy's alias for -inf, removed from jax.numpy in JAX 0.4.24)."""

import jax
import jax.numpy as jnp


def masked_softmax(logits, mask):
    scores = jnp.where(mask, logits, -jnp.inf)
    return jax.nn.softmax(scores, axis=-1)


def best_allowed(logits, mask):
    # running maximum seeded with -inf, as with NumPy's np.NINF
    best = jnp.full(logits.shape[:-1], -jnp.inf)
    for j in range(logits.shape[-1]):
        best = jnp.maximum(best, jnp.where(mask[..., j], logits[..., j], -jnp.inf))
    return best


def attend(logits, mask, values):
    weights = masked_softmax(logits, mask)
    best = best_allowed(logits, mask)
    return weights @ values, best, best > (-jnp.inf)
