from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:
    from jaxtyping import Array, Float


@jax.jit
def gae(rewards: Float[Array, "T"], values: Float[Array, "T"], dones: Float[Array, "T"], gamma: float, lam: float):
    # Generalized advantage estimation, walked backwards in time.
    gae = 0.0
    def step(gae, t):
        delta = rewards[t] + gamma * values[t + 1] * (1 - dones[t]) - values[t]
        gae = delta + gamma * lam * (1 - dones[t]) * gae
        return gae, gae
    gae, advantages = jax.lax.scan(step, gae, jnp.arange(len(rewards) - 1), reverse=True)
    return advantages
