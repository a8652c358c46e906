import jax
import jax.numpy as jnp


@jax.jit
def piecewise(x):
    s = jnp.sum(x)
    if s > 1.0:
        x = jnp.cumsum(x)
        s = s - 1.0
    # Negative sums flip the vector.
    elif s < -1.0:
        x = jnp.flip(x)
    else:
        x = jnp.sort(x)
    return x, s
