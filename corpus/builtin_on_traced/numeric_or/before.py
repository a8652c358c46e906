import jax
import jax.numpy as jnp


def pick(a, b):
    # On numbers, `or` returns an operand, not a boolean: not a logical_or.
    return a or b


@jax.jit
def scaled(x):
    return x * pick(2.0, 3.0)
