from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float

jax.config.update("jax_enable_x64", True)


def total(x: Float[Array, "n"]) -> Float[Array, ""]:
    acc = jax.lax.fori_loop(0, x.shape[0], lambda i, acc: acc + x[i], jnp.zeros((), x.dtype))
    return acc
