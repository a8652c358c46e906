from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float


def gate(x: Float[Array, ""]) -> Float[Array, ""]:
    if x > 0.37:
        return x * 2.0
    return x
