import jax
import jax.numpy as jnp

RESIDUALS = []


def sqrt2_good(x: jax.Array) -> jax.Array:
    """Newton's iteration for the square root of 2, logging how far the result is from it."""

    def body(_, x):
        return 0.5 * (x + 2.0 / x)

    x = jax.lax.fori_loop(0, 12, body, x)
    RESIDUALS.append(float(jnp.max(jnp.abs(x * x - 2.0))))
    return x
