import jax
import jax.numpy as jnp


@jax.jit
def encode(h, xs, w):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, None
    h, _ = jax.lax.scan(step, h, xs)
    return h
