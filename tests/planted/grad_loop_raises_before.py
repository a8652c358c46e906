import jax
import jax.numpy as jnp


def damped(x: jax.Array) -> jax.Array:
    for _ in range(4):
        x = 0.5 * jnp.tanh(x)
    return x
