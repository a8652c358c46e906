"""PRNGKey through a module alias, as training scripts often spell it: one hint, no rewrite."""

import jax.numpy as jnp
import jax.random as jr


def init(seed, width):
    key = jr.PRNGKey(seed)
    w_key, b_key = jr.split(key)
    return jr.normal(w_key, (width, width)) * 0.1, jnp.zeros(width) + jr.uniform(b_key, (width,)) * 0
