import jax
import jax.numpy as jnp


@jax.jit
def log_det(m):
    d = jnp.linalg.det(m)
    if d <= 0:
        return jnp.float32(-jnp.inf)
    # The usual case.
    logd = jnp.log(d)
    return logd
