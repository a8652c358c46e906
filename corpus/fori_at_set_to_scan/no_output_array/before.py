import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def power_iteration(a):
    def body(i, v):
        v = a @ v
        return v / jnp.linalg.norm(v)

    return lax.fori_loop(0, 50, body, jnp.ones(a.shape[0]))
