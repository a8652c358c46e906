from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:
    from jaxtyping import Array, Float


@jax.jit
def discounted_returns(rewards: Float[Array, "T"], gamma: float):
    ret = 0.0
    def step(ret, r):
        ret = r + gamma * ret
        return ret, ret
    ret, returns = jax.lax.scan(step, ret, rewards, reverse=True)
    return returns
