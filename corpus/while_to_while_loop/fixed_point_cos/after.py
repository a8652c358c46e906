import jax
import jax.numpy as jnp


@jax.jit
def dottie(x0):
    """Fixed point of cos, iterated until two successive values agree."""
    prev = x0
    x = jnp.cos(x0)
    def cond(carry):
        x, prev = carry
        return jnp.abs(x - prev) > 1e-6
    def body(carry):
        x, prev = carry
        prev = x
        x = jnp.cos(x)
        return x, prev
    x, prev = jax.lax.while_loop(cond, body, (x, prev))
    return x
