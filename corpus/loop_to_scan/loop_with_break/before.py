from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="limit")
def capped(x, limit):
    trace = []
    for i in range(1000):
        if i >= limit:
            break
        x = jnp.sqrt(x + 1.0)
        trace.append(x)
    return jnp.stack(trace)
