import jax
import jax.numpy as jnp


class Filter:
    def __init__(self, decay):
        self.decay = decay

    def apply(self, x):
        return x * self.decay

    def run(self, x, steps):
        jitted = jax.jit(self.apply)
        for _ in range(steps):
            x = jitted(x)
        return x


def run(x):
    return Filter(0.5).run(x, 4)
