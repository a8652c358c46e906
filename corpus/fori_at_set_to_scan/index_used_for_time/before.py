from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def forced_decay(x, dt, steps):
    xs = jnp.zeros((steps,) + x.shape, x.dtype)

    def body(i, carry):
        x, xs = carry
        t = i * dt
        x = x + dt * (jnp.cos(t) - x)
        xs = xs.at[i].set(x)
        return x, xs

    x, xs = lax.fori_loop(0, steps, body, (x, xs))
    return xs
