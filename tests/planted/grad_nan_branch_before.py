import jax
import jax.numpy as jnp


def root_above_one(x: jax.Array) -> jax.Array:
    safe = jnp.where(x > 1.0, x, 2.0)
    return jnp.where(x > 1.0, jnp.sqrt(safe - 1.0), 0.0)
