import jax
import jax.numpy as jnp


def triple_sine(x: jax.Array) -> jax.Array:
    for _ in range(3):
        x = jnp.sin(x)
    return x
