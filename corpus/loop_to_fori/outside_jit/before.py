import jax.numpy as jnp


def simulate(x):
    # Not traced: this runs eagerly, one step at a time.
    for _ in range(500):
        x = x + 0.01 * jnp.cos(x)
    return x
