import jax
import jax.numpy as jnp


@jax.jit
def has_nan(grads):
    flat = jnp.concatenate([jnp.ravel(g) for g in grads])
    return any(jnp.isnan(flat))
