import jax
import jax.numpy as jnp


@jax.jit
def quadrant(a, b):
    if a > 0 and b > 0:
        q = jnp.int32(1)
    elif a > 0:
        q = jnp.int32(4)
    elif b > 0:
        q = jnp.int32(2)
    else:
        q = jnp.int32(3)
    return q
