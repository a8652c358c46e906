import jax
import jax.numpy as jnp


@jax.jit
def to_unit(x):
    if jnp.issubdtype(x.dtype, jnp.integer):
        x = x.astype(jnp.float32) / 255.0
    if x.dtype == jnp.float16:
        x = x.astype(jnp.float32)
    return x
