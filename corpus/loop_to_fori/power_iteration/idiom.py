import jax
import jax.numpy as jnp


@jax.jit
def power_iteration(a):
    def step(_, v):
        v = a @ v
        return v / jnp.linalg.norm(v)

    return jax.lax.fori_loop(0, 100, step, jnp.ones(a.shape[0]))
