import jax
import jax.numpy as jnp


@jax.jit
def dottie(x0):
    """Fixed point of cos, iterated until two successive values agree."""
    prev = x0
    x = jnp.cos(x0)
    while jnp.abs(x - prev) > 1e-6:
        prev = x
        x = jnp.cos(x)
    return x
