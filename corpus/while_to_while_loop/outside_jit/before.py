import jax.numpy as jnp


def newton_sqrt(a):
    """No transformation traces this function: the Python loop runs on concrete arrays."""
    x = jnp.maximum(a, 1.0)
    while jnp.max(jnp.abs(x * x - a)) > 1e-4 * jnp.max(a):
        x = 0.5 * (x + a / x)
    return x
