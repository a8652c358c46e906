import jax
import jax.numpy as jnp


@jax.jit
def halvings(x):
    """`count` starts as an int32 array and becomes float: lax.while_loop needs a fixed dtype."""
    count = jnp.zeros((), dtype=jnp.int32)
    while x > 1.0:
        x = x / 2.0
        count = count + 0.5
    return count
