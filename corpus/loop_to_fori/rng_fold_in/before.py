from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="steps")
def random_walk(key, start, steps):
    position = start
    for t in range(steps):
        step_key = jax.random.fold_in(key, t)
        position = position + 0.1 * jax.random.normal(step_key, position.shape)
    return position
