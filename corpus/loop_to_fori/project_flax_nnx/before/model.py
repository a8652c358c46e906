import jax.numpy as jnp
from flax import nnx


class Refiner(nnx.Module):
    """An NNX module: `__call__` runs inside the `nnx.jit` train step in train.py."""

    def __init__(self, features, rngs, iterations=16):
        self.linear = nnx.Linear(features, features, rngs=rngs)
        self.iterations = iterations
        self.step_size = 0.1

    def __call__(self, x):
        y = self.linear(x)
        for _ in range(self.iterations):
            y = y - self.step_size * jnp.tanh(y)
        return y
