import jax
import jax.numpy as jnp


@jax.jit
def rate(x, k):
    if k == 0:
        lr = jnp.float32(0.1)
    elif k == 1:
        lr = jnp.float32(0.01)
    elif k == 2:
        pass
    return x * lr
