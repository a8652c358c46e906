import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def ar1(xs, a):
    def body(i, out):
        previous = jnp.where(i > 0, out[i - 1], 0.0)
        return out.at[i].set(a * previous + xs[i])

    return lax.fori_loop(0, xs.shape[0], body, jnp.zeros(xs.shape[0]))
