from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float


def time_above(x: Float[Array, "n"]) -> Float[Array, "n"]:
    """How many of 12 steps a decaying signal stays above the threshold."""
    steps = jnp.zeros_like(x)

    def body(_, carry):
        x, steps = carry
        x = x * 0.8
        steps = steps + jnp.where(x > 0.3, 1.0, 0.0)
        return x, steps

    x, steps = jax.lax.fori_loop(0, 12, body, (x, steps))
    return steps
