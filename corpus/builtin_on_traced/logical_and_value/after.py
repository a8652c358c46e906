import jax
import jax.numpy as jnp


@jax.jit
def in_box(p, lo, hi):
    inside = jnp.logical_and(jnp.min(p - lo) >= 0, jnp.max(p - hi) <= 0)
    return inside
