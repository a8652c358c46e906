import jax
import jax.numpy as jnp


def halve(x: jax.Array) -> jax.Array:
    return jax.lax.fori_loop(0, 4, lambda _, x: x / 2.0, x)  # planted: one halving too many
