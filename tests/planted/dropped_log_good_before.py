import jax
import jax.numpy as jnp

RESIDUALS = []


def sqrt2_good(x: jax.Array) -> jax.Array:
    """Newton's iteration for the square root of 2, logging how far the result is from it."""
    for _ in range(12):
        x = 0.5 * (x + 2.0 / x)
    RESIDUALS.append(float(jnp.max(jnp.abs(x * x - 2.0))))  # a host float: the original has no gradient
    return x
