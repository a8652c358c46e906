"""jnp.DeviceArray and jax.random.KeyArray (removed in 0.4.14 / 0.4.24) in annotations become jax.Array."""

from typing import Optional

import jax.numpy as jnp
from jax.random import KeyArray


def total(x: jnp.DeviceArray, key: Optional[KeyArray] = None) -> jnp.DeviceArray:
    del key
    return jnp.sum(x) * 2
