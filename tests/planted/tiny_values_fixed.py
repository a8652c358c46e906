from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float


@jax.jit
def correction(x: Float[Array, "n"]) -> Float[Array, "n"]:
    y = jnp.tanh(x) * 1e-6  # a small correction term: at most 8e-6 in magnitude
    def body(_, y):
        return y * 2.0
    y = jax.lax.fori_loop(0, 3, body, y)
    return y
