from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def wave_history(u, c, steps):
    """The field after each of `steps` advection steps, stacked."""
    history = jnp.zeros((steps,) + u.shape)

    def step(i, carry):
        u, history = carry
        u = u - c * (u - jnp.roll(u, 1, 0))
        history = history.at[i].set(u)
        return u, history

    u, history = lax.fori_loop(0, steps, step, (u, history))
    return history
