import jax
import jax.numpy as jnp

SEEN = []


def record_norm(x: jax.Array) -> jax.Array:
    return jnp.linalg.norm(x)  # planted: same value, but SEEN no longer grows
