import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def alternate(x):
    def body(i, x):
        # The index of lax.fori_loop is a tracer.
        if i % 2 == 0:
            x = jnp.roll(x, 1)
        else:
            x = jnp.flip(x) * 0.5
        return x

    return lax.fori_loop(0, 5, body, x)
