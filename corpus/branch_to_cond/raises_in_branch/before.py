import jax
import jax.numpy as jnp


@jax.jit
def checked_sqrt(x):
    # Reported: a raise cannot depend on a traced value; checkify or equinox.error_if can.
    if jnp.any(x < 0):
        raise ValueError("negative input")
    return jnp.sqrt(x)
