from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def step(params, grads, lr):
    return params - lr * grads


def train(params, grads):
    for epoch in range(3):
        lr = 0.1 * 0.5**epoch  # decayed once per epoch, in the loop around the batch loop
        for _ in range(4):
            params = step(params, grads, lr=lr)
    return params
