import jax
import jax.numpy as jnp
from model import doubled

doubled_fast = jax.jit(doubled)


def run(xs):
    rows = (xs[0], xs[1])
    return doubled_fast(xs)[:2] + doubled_fast(rows)
