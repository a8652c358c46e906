import jax
import jax.numpy as jnp


def double(v):
    return v * 2.0


def run(x):
    for _ in range(5):
        x = jax.jit(double)(x)
    return x
