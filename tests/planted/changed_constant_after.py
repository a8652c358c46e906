import jax
import jax.numpy as jnp


def ema(values: jax.Array, decay: float = 0.9) -> jax.Array:
    def step(average, value):
        return decay * average + (1.0 - decay) * value, None
    average, _ = jax.lax.scan(step, jnp.zeros_like(values[0]), values)
    return average


def steps(x: jax.Array, n: int) -> jax.Array:
    def body(_, x):
        return 0.99 * x + 0.001 * jnp.cos(x)  # planted: 0.01 became 0.001
    return jax.lax.fori_loop(0, n, body, x)
