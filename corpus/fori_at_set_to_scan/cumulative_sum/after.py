import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def running_total(xs):
    def body(total, x):
        total = total + x
        return total, total.astype(float)

    total, sums = lax.scan(body, 0.0, xs)
    return sums
