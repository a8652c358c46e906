import jax.numpy as jnp


def replace_first(n):
    parts = [jnp.zeros(n), jnp.ones(n)]
    parts[0] = jnp.full(n, 3.0)
    parts[1] += 1.0
    return jnp.stack(parts)
