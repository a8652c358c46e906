import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def loss(pred, target, kind):
    err = pred - target
    if kind == 0:
        return jnp.mean(err**2)
    elif kind == 1:
        return jnp.mean(jnp.abs(err))
    elif kind == 2:
        return jnp.max(jnp.abs(err))
    return jnp.float32(0.0)
