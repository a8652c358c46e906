import jax
import jax.numpy as jnp


@jax.jit
def apply_mask(x, mask=None):
    return x if mask is None else x * mask
