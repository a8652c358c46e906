import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def running_total(xs):
    def body(i, carry):
        total, sums = carry
        total = total + xs[i]
        sums = sums.at[i].set(total)
        return total, sums

    total, sums = lax.fori_loop(0, len(xs), body, (0.0, jnp.zeros(len(xs))))
    return sums
