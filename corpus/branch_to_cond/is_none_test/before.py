import jax
import jax.numpy as jnp


@jax.jit
def masked_mean(x, mask=None):
    if mask is None:
        mask = jnp.ones_like(x, dtype=bool)
    if mask is not None and x.ndim > 0:
        x = jnp.where(mask, x, 0.0)
    return jnp.sum(x) / jnp.sum(mask)
