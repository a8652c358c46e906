from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="power")
def moments(xs, power):
    return jnp.asarray(xs) ** power


def schedule(n):
    # A new length compiles again, and every call transfers n scalars.
    return moments([0.5 * i + 1 for i in range(n)], power=2)
