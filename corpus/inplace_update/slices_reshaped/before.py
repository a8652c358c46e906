import jax
import jax.numpy as jnp


@jax.jit
def stripes(offset):
    m = jnp.arange(12.0).reshape(3, 4)
    m[:, ::2] = 0.0
    m[1:, ...] += offset
    m[::-1, -1] = jnp.array([1.0, 2.0, 3.0])
    return m
