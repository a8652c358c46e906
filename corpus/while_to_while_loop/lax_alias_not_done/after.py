import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def shrink(x):
    """Halves x until every entry lies inside (-1, 1)."""
    done = jnp.all(jnp.abs(x) < 1.0)
    def cond(carry):  # a traced flag
        _, done = carry
        return jnp.logical_not(done)
    def body(carry):
        x, done = carry
        x = x / 2.0
        done = jnp.all(jnp.abs(x) < 1.0)
        return x, done
    x, done = lax.while_loop(cond, body, (x, done))
    return x
