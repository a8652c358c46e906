import jax
import jax.numpy as jnp


@jax.jit
def in_box(p, lo, hi):
    inside = (jnp.min(p - lo) >= 0) and (jnp.max(p - hi) <= 0)
    return inside
