import jax
import jax.numpy as jnp


@jax.jit
def flatten_rows(x):
    rows = x.shape[0] if x.ndim > 1 else 1
    scale = 1.0 if x.dtype == jnp.float32 else 0.5
    return x.reshape(rows, -1) * scale
