import jax
import jax.numpy as jnp


@jax.jit
def gated(x, y):
    # `and` in an `if` test belongs to JF201's rewrite, which turns the whole `if` into lax.cond.
    if (jnp.sum(x) > 0) and (jnp.sum(y) > 0):
        x = jnp.cumsum(x)
    return x
