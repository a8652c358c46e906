import jax
import jax.numpy as jnp


@jax.jit
def soft_root(x):
    if x > 0:  # a NaN guard: sqrt's gradient is NaN below zero and infinite at zero
        y = jnp.sqrt(x)
    else:
        y = 0.0
    return y
