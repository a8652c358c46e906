import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def positive_totals(xs):
    def body(i, carry):
        total, out = carry
        total = total + xs[i]
        out = jnp.where(total > 0, out.at[i].set(total), out)
        return total, out

    _, out = lax.fori_loop(0, xs.shape[0], body, (0.0, jnp.zeros(xs.shape[0])))
    return out
