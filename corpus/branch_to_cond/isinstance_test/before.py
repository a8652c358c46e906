import jax
import jax.numpy as jnp


@jax.jit
def total(params):
    if isinstance(params, dict):
        params = list(params.values())
    if len(params) > 1:
        return sum(jnp.sum(p) for p in params)
    return jnp.sum(params[0])
