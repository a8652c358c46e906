import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def alternate(x):
    def body(i, x):
        # The index of lax.fori_loop is a tracer.
        def true_fn(x):
            return jnp.roll(x, 1)
        def false_fn(x):
            return jnp.flip(x) * 0.5
        x = lax.cond(i % 2 == 0, true_fn, false_fn, x)
        return x

    return lax.fori_loop(0, 5, body, x)
