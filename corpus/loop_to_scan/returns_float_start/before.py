from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:
    from jaxtyping import Array, Float


@jax.jit
def discounted_returns(rewards: Float[Array, "T"], gamma: float):
    ret = 0.0
    returns = []
    for r in reversed(rewards):
        ret = r + gamma * ret
        returns.append(ret)
    returns.reverse()
    return jnp.stack(returns)
