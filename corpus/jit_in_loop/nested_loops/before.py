import jax
import jax.numpy as jnp


def sweep(x):
    for _ in range(3):
        for _ in range(4):
            x = jax.jit(lambda v: jnp.cos(v))(x)
        x = x + 1.0
    return x
