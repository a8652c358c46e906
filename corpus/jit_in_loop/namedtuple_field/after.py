from typing import NamedTuple

import jax
import jax.numpy as jnp


def _scale(v):
    return v * 0.5


class Transform(NamedTuple):
    update: object


TRANSFORM = Transform(_scale)


def run(x):
    jitted = jax.jit(TRANSFORM.update)
    for _ in range(4):
        x = jitted(x)
    return x
