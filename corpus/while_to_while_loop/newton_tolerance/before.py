import jax
import jax.numpy as jnp


@jax.jit
def newton_sqrt(a):
    """Square roots by Newton's method, iterated until every residual is small."""
    x = jnp.maximum(a, 1.0)
    # Newton step for x * x = a
    while jnp.max(jnp.abs(x * x - a)) > 1e-4 * jnp.max(a):
        x = 0.5 * (x + a / x)
    return x
