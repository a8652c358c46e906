from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="steps")
def random_walk(key, start, steps):
    def step(t, position):
        noise = jax.random.normal(jax.random.fold_in(key, t), position.shape)
        return position + 0.1 * noise

    return jax.lax.fori_loop(0, steps, step, start)
