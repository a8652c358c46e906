import jax
import jax.numpy as jnp


@jax.jit
def descend(x):
    """A traced test, but the body leaves with `break`: reported, not rewritten."""
    step = jnp.ones_like(x)
    while jnp.linalg.norm(step) > 1e-4:
        step = 0.5 * x
        x = x - step
        if jnp.all(x < 1e-3):
            break
    return x
