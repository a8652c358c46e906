import jax
import jax.numpy as jnp


@jax.jit
def encode(h, xs, w):
    for x in xs:
        h = jnp.tanh(h @ w + x)
    return h
