import jax
import jax.numpy as jnp


def ema(values: jax.Array, decay: float = 0.9) -> jax.Array:
    average = jnp.zeros_like(values[0])
    for t in range(values.shape[0]):
        average = decay * average + (1.0 - decay) * values[t]
    return average


def steps(x: jax.Array, n: int) -> jax.Array:
    for _ in range(n):
        x = 0.99 * x + 0.01 * jnp.cos(x)
    return x
