from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float


def activation(x: Float[Array, "n"], mode: int) -> Float[Array, "n"]:
    index = jnp.where((mode == 0) | (mode == 1), mode, 2)  # every other mode is the else branch
    return jax.lax.switch(index, [jnp.tanh, jax.nn.relu, lambda x: x], x)
