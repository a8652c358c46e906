from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("steps",))
def decay(x, steps):
    for i in range(steps):
        x = x * 0.5
        jax.debug.print("step {} of {} value {}", str(i), str(steps), x)
    return x
