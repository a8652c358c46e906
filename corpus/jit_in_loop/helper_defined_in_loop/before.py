import jax
import jax.numpy as jnp


def run(x):
    for k in range(3):
        def shift(v):
            return v + k

        x = jax.jit(shift)(x)
    return x
