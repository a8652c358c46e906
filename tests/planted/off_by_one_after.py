from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float


@jax.jit
def geometric(x: Float[Array, "n"], rate: float) -> Float[Array, "n"]:
    def body(i, x):
        return x * rate + 1.0
    x = jax.lax.fori_loop(0, 6, body, x)  # planted: one step too many
    return x
