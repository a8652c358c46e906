import jax
from jax import lax


@jax.jit
def safe_divide(x, y):
    if y != 0:  # the cheatsheet's example: TracerBoolConversionError under jit
        return x / y
    else:
        return 0.0
