import jax.numpy as jnp


def smooth(x, steps):
    for _ in range(steps):
        x = x + 0.1 * (jnp.roll(x, 1) - x)
    return x
