"""Weight the i-th example by exp(-rate * i): the index is used as a number (mapped over jnp.arange)."""
import jax
import jax.numpy as jnp


def decayed(xs: jax.Array, rate=0.1):
    def body(i, x):
        return x * jnp.exp(-rate * i)
    return jax.vmap(body)(jnp.arange(len(xs)), xs)
