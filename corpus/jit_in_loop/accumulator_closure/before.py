import jax
import jax.numpy as jnp


def run(x):
    total = jnp.zeros_like(x)
    for _ in range(3):
        total = total + x
        x = jax.jit(lambda v: v - total)(x)
    return x
