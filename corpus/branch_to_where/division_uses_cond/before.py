import jax
import jax.numpy as jnp


@jax.jit
def mean_of_positive(x):
    mask = x > 0
    total = jnp.sum(jnp.where(mask, x, 0.0))
    count = jnp.sum(mask)
    return total / count if count > 0 else total
