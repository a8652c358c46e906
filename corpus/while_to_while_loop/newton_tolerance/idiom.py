import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def newton_sqrt(a):
    def not_converged(x):
        return jnp.max(jnp.abs(x * x - a)) > 1e-4 * jnp.max(a)

    return lax.while_loop(not_converged, lambda x: 0.5 * (x + a / x), jnp.maximum(a, 1.0))
