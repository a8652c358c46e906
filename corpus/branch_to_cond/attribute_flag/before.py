from typing import NamedTuple

import jax
import jax.numpy as jnp


class Config(NamedTuple):
    use_bias: bool
    scale: float


@jax.jit
def dense(x, w, b):
    config = Config(use_bias=True, scale=2.0)
    y = x @ w
    if config.use_bias:
        y = y + b
    return y * config.scale
