import jax
import jax.numpy as jnp


@jax.jit
def finite_flag(g):
    s = jnp.sum(g)
    bad = jnp.logical_not(jnp.isfinite(s))
    return bad, s
