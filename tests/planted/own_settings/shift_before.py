import jax.numpy as jnp


def shift(x, k):
    out = x
    for _ in range(k):
        out = jnp.roll(out, 1)
    return out
