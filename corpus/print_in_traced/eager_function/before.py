import jax.numpy as jnp


def report(x):
    total = jnp.sum(x)
    print("total", total)  # runs eagerly: prints the number
    return total
