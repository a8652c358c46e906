import jax.numpy as jnp
from jax import lax


def cumulative(xs):
    def step(total, x):
        total = total + x
        print("running total:", total)
        return total, total

    _, totals = lax.scan(step, jnp.float32(0.0), xs)
    return totals
