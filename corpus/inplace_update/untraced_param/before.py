import jax
import jax.numpy as jnp


def normalize(x: jax.Array) -> jax.Array:
    x[0] = 0.0
    return x / jnp.sum(x)
