import jax
import jax.numpy as jnp

SEEN = []


def record_norm(x: jax.Array) -> jax.Array:
    norm = jnp.sqrt(jnp.sum(x * x))
    SEEN.append(norm)
    return norm
