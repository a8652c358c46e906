import jax
import jax.numpy as jnp


@jax.jit
def shortest_prefix_sum(x):
    """`i` is a Python int used as a slice bound: it cannot become a traced int32."""
    i = 1
    total = jnp.sum(x[:i])
    while total < 10.0:
        i = i + 1
        total = jnp.sum(x[:i])
    return total
