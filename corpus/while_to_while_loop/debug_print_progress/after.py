import jax
import jax.numpy as jnp


@jax.jit
def relax(x):
    """Smooth `x` until the update is small, printing the size of each update."""
    delta = jnp.ones_like(x)
    def cond(carry):
        _, delta = carry
        return jnp.max(jnp.abs(delta)) > 1e-3
    def body(carry):
        x, delta = carry
        delta = 0.5 * (jnp.roll(x, 1) - x)
        x = x + delta
        jax.debug.print("update {:.4f}", jnp.max(jnp.abs(delta)))
        return x, delta
    x, delta = jax.lax.while_loop(cond, body, (x, delta))
    return x
