from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def step(params, grads, lr):
    return params - lr * grads


def train(params, grads):
    for i in range(5):
        params = step(params, grads, lr=0.1 * 0.9 ** i)
    return params
