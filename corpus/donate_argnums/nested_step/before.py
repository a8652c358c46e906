import jax
import jax.numpy as jnp


def train(x, steps):
    # the step is defined where it is used; every call rebinds `p`
    @jax.jit
    def step(p, x):
        g = jax.grad(lambda q: jnp.sum((q * x - 1.0) ** 2))(p)
        return p - 0.1 * g

    p = jnp.zeros_like(x)
    for _ in range(steps):
        p = step(p, x)
    return p
