from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def trajectory(positions, velocity, steps):
    path = jnp.zeros((steps, *positions.shape), dtype=positions.dtype)

    def body(i, carry):
        positions, path = carry
        path = path.at[i].set(positions)  # record, then move
        positions = positions + velocity * jnp.cos(positions)
        return positions, path

    positions, path = lax.fori_loop(0, steps, body, (positions, path))
    return path, positions
