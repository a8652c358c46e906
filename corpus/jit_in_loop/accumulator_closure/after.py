import jax
import jax.numpy as jnp


def run(x):
    total = jnp.zeros_like(x)
    jitted = jax.jit(lambda v, total: v - total)
    for _ in range(3):
        total = total + x
        x = jitted(x, total)
    return x
