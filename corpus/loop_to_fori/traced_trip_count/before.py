import jax
import jax.numpy as jnp


@jax.jit
def relax(x, n):
    # `n` is traced: range(n) cannot run under jit.
    for _ in range(n):
        x = 0.5 * (x + jnp.cos(x))
    return x
