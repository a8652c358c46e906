"""A buffer filled row by row inside jit: JF301's jax.vmap, not JF101's fori_loop or JF102's scan (the steps
are independent)."""
import jax
import jax.numpy as jnp


@jax.jit
def squash(xs):
    n = xs.shape[0]
    out = jnp.empty((n, xs.shape[1]))
    for i in range(n):
        y = jnp.tanh(0.5 * xs[i])
        out = out.at[i].set(2.0 * y + 1.0)
    return out
