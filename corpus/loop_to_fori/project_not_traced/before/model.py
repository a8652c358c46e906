import jax.numpy as jnp


def relax(x, steps):
    # A plain Python loop: whether it runs under tracing depends on the callers.
    for _ in range(steps):
        x = 0.5 * (x + jnp.cos(x))
    return x
