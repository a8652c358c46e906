from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float


def activation(x: Float[Array, "n"], mode: int) -> Float[Array, "n"]:
    # planted: lax.switch clamps its index, so a negative mode takes branch 0, not the else branch
    return jax.lax.switch(jnp.minimum(mode, 2), [jnp.tanh, jax.nn.relu, lambda x: x], x)
