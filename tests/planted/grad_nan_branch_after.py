import jax
import jax.numpy as jnp


def root_above_one(x: jax.Array) -> jax.Array:
    return jnp.where(x > 1.0, jnp.sqrt(x - 1.0), 0.0)  # planted: same values, NaN gradient where x < 1
