import jax
import jax.numpy as jnp


@jax.jit
def power_iteration(a):
    v = jnp.ones(a.shape[0])
    # Repeated multiplication converges to the dominant eigenvector.
    for i in range(100):
        v = a @ v
        v = v / jnp.linalg.norm(v)
    return v
