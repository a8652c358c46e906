"""Callers pass a value computed at run time: a static argument would compile once per value, so the
finding is reported without a fix."""

import jax
import jax.numpy as jnp


@jax.jit
def window(x, size):
    return jnp.convolve(x, jnp.ones(size) / size, mode="same")


def smooth(x, sizes):
    return [window(x, s) for s in sizes]
