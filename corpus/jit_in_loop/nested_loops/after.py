import jax
import jax.numpy as jnp


def sweep(x):
    jitted = jax.jit(lambda v: jnp.cos(v))
    for _ in range(3):
        for _ in range(4):
            x = jitted(x)
        x = x + 1.0
    return x
