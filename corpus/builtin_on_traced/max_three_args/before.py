import jax
import jax.numpy as jnp


@jax.jit
def widest(a, b):
    ra = jnp.max(a) - jnp.min(a)
    rb = jnp.max(b) - jnp.min(b)
    return max(ra, rb, 1e-3)
