import jax
import jax.numpy as jnp


@jax.jit
def process_array(x):
    return jnp.sum(x)


def run(n):
    # The reference's fix: convert before the jit boundary.
    values = jnp.arange(n)
    return process_array(values)
