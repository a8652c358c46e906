import jax
import jax.numpy as jnp


@jax.jit
def mean_of_positive(x):
    mask = x > 0
    total = jnp.sum(jnp.where(mask, x, 0.0))
    count = jnp.sum(mask)
    return jax.lax.cond(count > 0, lambda: total / count, lambda: total)
