from __future__ import annotations

from typing import TYPE_CHECKING

import jax
import jax.numpy as jnp

if TYPE_CHECKING:  # annotations only: jaxfix reads them from the source
    from jaxtyping import Array, Float


def noise(k, shape):
    return jax.random.normal(k, shape)


def jitter(key: jax.Array, x: Float[Array, "n"]) -> Float[Array, "n"]:
    return x + 0.1 * noise(key, x.shape)  # the key reaches jax.random through a helper


if __name__ == "__main__":
    print(jitter(jax.random.key(0), jnp.ones(3)))
