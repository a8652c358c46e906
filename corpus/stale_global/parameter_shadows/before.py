"""The jitted function takes `scale` as an argument: the global of the same name is never read there."""

import jax
import jax.numpy as jnp

scale = 1.0


@jax.jit
def apply(x, scale):
    return x * scale


first = apply(jnp.ones(2), scale)
scale = 2.0
second = apply(jnp.ones(2), scale)


def results():
    return first, second
