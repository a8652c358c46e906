from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def iterate_cos(x0, steps):
    orbit = jnp.zeros(steps + 1).at[0].set(x0)

    def body(i, orbit):
        return orbit.at[i + 1].set(jnp.cos(orbit[i]))

    return lax.fori_loop(0, steps, body, orbit)
