import jax
import jax.numpy as jnp


@jax.jit
def power_iteration(a):
    v = jnp.ones(a.shape[0])
    # Repeated multiplication converges to the dominant eigenvector.
    def body(i, v):
        v = a @ v
        return v / jnp.linalg.norm(v)
    v = jax.lax.fori_loop(0, 100, body, v)
    return v
