import jax
import jax.numpy as jnp


@jax.jit
def smooth_step(x):
    if x < 0.0:
        return jnp.zeros_like(x)
    elif x < 1.0:
        return x * x * (3.0 - 2.0 * x)
    else:
        return jnp.ones_like(x)
