import timeit

import jax
import jax.numpy as jnp


@jax.jit
def update(x):
    return jnp.sin(x) * 2.0


def measure(x):
    update(x)  # warm-up: compiles
    begin = timeit.default_timer()
    update(x)
    end = timeit.default_timer()
    return x
