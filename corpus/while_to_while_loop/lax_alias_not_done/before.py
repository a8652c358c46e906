import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def shrink(x):
    """Halves x until every entry lies inside (-1, 1)."""
    done = jnp.all(jnp.abs(x) < 1.0)
    while not done:  # a traced flag
        x = x / 2.0
        done = jnp.all(jnp.abs(x) < 1.0)
    return x
