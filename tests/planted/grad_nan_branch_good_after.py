import jax
import jax.numpy as jnp


def root_above_one_good(x: jax.Array) -> jax.Array:
    inside = x > 1.0
    return jnp.where(inside, jnp.sqrt(jnp.where(inside, x - 1.0, 1.0)), 0.0)  # the guard kept: no NaN gradient
