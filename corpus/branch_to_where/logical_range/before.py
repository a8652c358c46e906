import jax
import jax.numpy as jnp


@jax.jit
def window(x, lo, hi):
    m = jnp.mean(x)
    return x if lo < m < hi else jnp.zeros_like(x)
