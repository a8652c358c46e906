from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def forced_decay(x, dt, steps):
    def body(x, i):
        t = i * dt
        x = x + dt * (jnp.cos(t) - x)
        return x, x

    x, xs = lax.scan(body, x, jnp.arange(steps))
    return xs
