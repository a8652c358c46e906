"""A buffer filled row by row inside jit: JF301's jax.vmap, not JF101's fori_loop or JF102's scan (the steps
are independent)."""
import jax
import jax.numpy as jnp


@jax.jit
def squash(xs):
    n = xs.shape[0]
    def body(x):
        y = jnp.tanh(0.5 * x)
        return 2.0 * y + 1.0
    out = jax.vmap(body)(xs).astype(float)
    return out
