import jax.numpy as jnp


def ramp(n):
    acc = jnp.zeros(n, dtype=jnp.float32)
    i = 0
    while i < n:
        acc = acc.at[i].add(10.0 * i)
        i += 1
    return acc
