"""jnp.DeviceArray and jax.random.KeyArray (removed in 0.4.14 / 0.4.24) in annotations become jax.Array."""

from typing import Optional

import jax.numpy as jnp
import jax


def total(x: jax.Array, key: Optional[jax.Array] = None) -> jax.Array:
    del key
    return jnp.sum(x) * 2
