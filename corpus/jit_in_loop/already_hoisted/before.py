import jax
import jax.numpy as jnp


def run(x):
    step = jax.jit(lambda v: jnp.sin(v))
    for _ in range(5):
        x = step(x)
    return x
