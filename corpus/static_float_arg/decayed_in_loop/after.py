from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def step(params, grads, lr):
    return params - lr * grads


def train(params, grads):
    lr = 0.1
    for _ in range(5):
        params = step(params, grads, lr=lr)
        lr *= 0.5
    return params
