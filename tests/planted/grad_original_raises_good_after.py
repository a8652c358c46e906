import jax
import jax.numpy as jnp


def halve_good(x: jax.Array) -> jax.Array:
    return jax.lax.fori_loop(0, 3, lambda _, x: x / 2.0, x)  # differentiable where the original is not: fine
