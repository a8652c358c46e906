import jax
import jax.numpy as jnp


@jax.jit
def drain(x):
    """`while queue:` tests a Python list, which works under jit: left alone."""
    queue = [x, 2.0 * x, 3.0 * x]
    total = jnp.zeros_like(x)
    while queue:
        total = total + jnp.sin(queue.pop())
    return total
