import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def schedule(x):
    def body(i, x):
        # The loop index is a tracer inside lax.fori_loop.
        if i == 0:
            x = x * 2.0
        elif i == 1:
            x = jnp.sin(x)
        else:
            x = x - 0.1
        return x

    return lax.fori_loop(0, 4, body, x)
