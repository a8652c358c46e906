import jax
import jax.numpy as jnp


@jax.jit
def column_sums(x):
    total = 0.0
    # x[i] may be a row, not a number: `total` would change shape after the first step.
    for i in range(128):
        total = total + x[i]
    return total
