import jax
import jax.numpy as jnp


@jax.jit
def stripes(offset):
    m = jnp.arange(12.0).reshape(3, 4)
    m = m.at[:, ::2].set(0.0)
    m = m.at[1:, ...].add(offset)
    m = m.at[::-1, -1].set(jnp.array([1.0, 2.0, 3.0]))
    return m
