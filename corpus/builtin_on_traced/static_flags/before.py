from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("training", "rate"))
def maybe_drop(x, key, training, rate):
    active = training and rate > 0.0 and not (x.ndim == 0)
    if active:
        x = jnp.where(jax.random.bernoulli(key, 1.0 - rate, x.shape), x / (1.0 - rate), 0.0)
    return x
