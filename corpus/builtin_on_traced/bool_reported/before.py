import jax
import jax.numpy as jnp


@jax.jit
def positive(x):
    return bool(jnp.sum(x) > 0)
