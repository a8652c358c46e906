from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def trajectory(positions, velocity, steps):
    def body(positions, _):
        path_t = positions  # record, then move
        positions = positions + velocity * jnp.cos(positions)
        return positions, path_t

    positions, path = lax.scan(body, positions, length=steps)
    return path, positions
