from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float


def jitter(key: jax.Array, x: Float[Array, "n"]) -> Float[Array, "n"]:
    return x + 0.1 * jax.random.normal(key, x.shape)
