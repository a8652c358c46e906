import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def running_min(xs):
    def step(best, x):
        best = jnp.minimum(best, x)
        return best, best

    return lax.scan(step, jnp.float32(jnp.inf), xs)
