import jax
import jax.numpy as jnp


@jax.jit
def pool(x, mode=0):
    # An omitted default is not traced: the chain runs in Python on the default value.
    if mode == 0:
        return jnp.mean(x)
    elif mode == 1:
        return jnp.max(x)
    return jnp.min(x)
