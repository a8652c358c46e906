import jax
import jax.numpy as jnp


@jax.jit
def normalize(x):
    if x.ndim == 0:
        y = x
    else:
        def true_fn():
            return x / jnp.sum(x)
        def false_fn():
            return jnp.flip(x)
        y = jax.lax.cond(jnp.sum(x) > 0, true_fn, false_fn)
    return y
