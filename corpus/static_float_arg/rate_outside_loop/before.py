from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="lr")
def step(params, grads, lr):
    return params - lr * grads


def train(params, grads, epochs):
    lr = 0.1 / epochs
    for _ in range(epochs):
        params = step(params, grads, lr=lr)
    return params
