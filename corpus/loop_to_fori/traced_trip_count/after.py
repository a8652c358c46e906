import jax
import jax.numpy as jnp


@jax.jit
def relax(x, n):
    # `n` is traced: range(n) cannot run under jit.
    def body(_, x):
        return 0.5 * (x + jnp.cos(x))
    x = jax.lax.fori_loop(0, n, body, x)
    return x
