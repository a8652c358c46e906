from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="steps")
def random_walk(key, start, steps):
    position = start
    def body(t, position):
        step_key = jax.random.fold_in(key, t)
        return position + 0.1 * jax.random.normal(step_key, position.shape)
    position = jax.lax.fori_loop(0, steps, body, position)
    return position
