import jax
import jax.numpy as jnp


@jax.jit
def log_det(m):
    d = jnp.linalg.det(m)
    def true_fn():
        return jnp.float32(-jnp.inf)
    def false_fn():
        # The usual case.
        logd = jnp.log(d)
        return logd
    return jax.lax.cond(d <= 0, true_fn, false_fn)
