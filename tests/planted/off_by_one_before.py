from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float


@jax.jit
def geometric(x: Float[Array, "n"], rate: float) -> Float[Array, "n"]:
    for i in range(5):
        x = x * rate + 1.0
    return x
