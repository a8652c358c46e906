import jax
import jax.numpy as jnp


@jax.jit
def all_positive(weights):
    ok = all(weights > 0)
    return ok
