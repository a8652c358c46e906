import jax
import jax.numpy as jnp


@jax.jit
def sign_or_half(x):
    s = jnp.sum(x)
    return 1 if s > 0 else s * 0.5
