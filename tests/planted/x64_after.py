from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float

jax.config.update("jax_enable_x64", True)


def total(x: Float[Array, "n"]) -> Float[Array, ""]:
    # planted: accumulates in float32, then casts back
    acc = jax.lax.fori_loop(0, x.shape[0], lambda i, acc: acc + x[i].astype(jnp.float32), jnp.zeros((), jnp.float32))
    return acc.astype(x.dtype)
