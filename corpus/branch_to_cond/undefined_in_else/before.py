import jax
import jax.numpy as jnp


@jax.jit
def first_positive(x):
    total = jnp.sum(x)
    if total > 0:
        scale = 1.0 / total
    return x * scale
