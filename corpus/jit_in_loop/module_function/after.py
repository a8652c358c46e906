import jax
import jax.numpy as jnp


def double(v):
    return v * 2.0


def run(x):
    jitted = jax.jit(double)
    for _ in range(5):
        x = jitted(x)
    return x
