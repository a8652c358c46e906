import jax
import jax.numpy as jnp


@jax.jit
def flatten(x):
    print("tracing flatten for", x.shape, x.dtype, "ndim", x.ndim)  # trace-time shapes: fine
    return jnp.reshape(x, (-1,))
