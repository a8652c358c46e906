"""Weight the i-th example by exp(-rate * i): the index is used as a number (mapped over jnp.arange)."""
import jax
import jax.numpy as jnp


def decayed(xs: jax.Array, rate=0.1):
    return jnp.stack([x * jnp.exp(-rate * i) for i, x in enumerate(xs)])
