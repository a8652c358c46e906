import jax.numpy as jnp


def encode(h, xs, w):
    for x in xs:
        h = jnp.tanh(h @ w + x)
    return h
