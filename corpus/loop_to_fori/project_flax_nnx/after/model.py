import jax.numpy as jnp
from flax import nnx
import jax


class Refiner(nnx.Module):
    """An NNX module: `__call__` runs inside the `nnx.jit` train step in train.py."""

    def __init__(self, features, rngs, iterations=16):
        self.linear = nnx.Linear(features, features, rngs=rngs)
        self.iterations = iterations
        self.step_size = 0.1

    def __call__(self, x):
        y = self.linear(x)
        def body(_, y):
            return y - self.step_size * jnp.tanh(y)
        y = jax.lax.fori_loop(0, self.iterations, body, y)
        return y
