import jax
import jax.numpy as jnp


def soft_sqrt(x: jax.Array) -> jax.Array:
    return jnp.where(x > 0, jnp.sqrt(x), 0.0)  # planted: same values, NaN gradient where x < 0
