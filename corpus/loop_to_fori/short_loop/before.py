import jax
import jax.numpy as jnp


@jax.jit
def refine(x):
    # Three steps unroll into less code than a loop compiles to.
    for _ in range(3):
        x = x - 0.1 * jnp.sin(x)
    return x
