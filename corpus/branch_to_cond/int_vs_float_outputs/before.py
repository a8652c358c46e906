import jax
import jax.numpy as jnp


@jax.jit
def count_or_scale(x):
    if jnp.sum(x) > 0:
        n = 1
    else:
        n = jnp.sum(x) * 2.0
    return n
