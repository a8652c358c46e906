import jax
import jax.numpy as jnp


@jax.jit
def process_list(x):
    return jnp.sum(jnp.array(x))


def run(n):
    # The reference's example: each element becomes a separate traced input.
    values = list(range(n))
    return process_list(values)
