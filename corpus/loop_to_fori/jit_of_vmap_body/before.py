import jax
import jax.numpy as jnp


def logistic_map(r):
    x = jnp.full_like(r, 0.5)
    for _ in range(40):
        x = r * x * (1.0 - x)
    return x


population = jax.jit(jax.vmap(logistic_map))
