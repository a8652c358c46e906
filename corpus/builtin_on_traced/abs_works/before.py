import jax
import jax.numpy as jnp


@jax.jit
def l1(x):
    # abs() calls x.__abs__(), which JAX arrays implement: it works on tracers.
    return jnp.sum(abs(x))
