import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def totals_per_row(xs):
    def body(i, carry):
        total, out = carry
        total = total + jnp.sum(xs[i])
        out = out.at[i].set(total)
        return total, out

    _, out = lax.fori_loop(0, xs.shape[0], body, (0.0, jnp.zeros(xs.shape)))
    return out
