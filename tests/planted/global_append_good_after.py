import jax
import jax.numpy as jnp

SEEN = []


def record_norm_good(x: jax.Array) -> jax.Array:
    norm = jnp.sqrt(jnp.sum(x**2))
    SEEN.append(norm)  # the same record kept
    return norm
