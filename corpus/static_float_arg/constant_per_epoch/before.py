from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="lr")
def step(params, grads, lr):
    return params - lr * grads


def train(params, grads):
    for epoch in range(3):
        lr = 0.1  # the same float in every epoch: one compilation
        for _ in range(4):
            params = step(params, grads, lr=lr)
    return params
