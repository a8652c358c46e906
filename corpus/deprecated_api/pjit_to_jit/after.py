"""pjit (deprecated in JAX 0.8.0, still there in 0.10) as a decorator, inside partial and as a call."""

from functools import partial

import jax.numpy as jnp
import jax


@jax.jit
def double(x):
    return x * 2


@partial(jax.jit, static_argnums=1)
def power(x, n):
    return x**n


def run(x):
    shifted = jax.jit(lambda v: v + 1, in_shardings=None, out_shardings=None)
    return double(x) + power(x, 3) + shifted(x)
