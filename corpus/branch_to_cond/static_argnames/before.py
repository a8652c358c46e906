from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("training", "rate"))
def dropout(x, key, training, rate):
    if training and rate > 0.0:
        keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
        x = jnp.where(keep, x / (1.0 - rate), 0.0)
    return x
