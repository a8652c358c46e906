import jax
import jax.numpy as jnp


@jax.jit
def maybe_cumsum(x):
    # More than a cheap choice: JF201 turns this into lax.cond; JF202 leaves it alone.
    if jnp.sum(x) > 0:
        x = jnp.cumsum(x)
    return x
