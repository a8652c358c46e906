from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:
    from jaxtyping import Array, Float


@jax.jit
def gae(rewards: Float[Array, "T"], values: Float[Array, "T"], dones: Float[Array, "T"], gamma: float, lam: float):
    # Generalized advantage estimation, walked backwards in time.
    advantages = []
    gae = 0.0
    for t in reversed(range(len(rewards) - 1)):
        delta = rewards[t] + gamma * values[t + 1] * (1 - dones[t]) - values[t]
        gae = delta + gamma * lam * (1 - dones[t]) * gae
        advantages.append(gae)
    advantages = advantages[::-1]
    return jnp.stack(advantages)
