from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="lr")
def step(params, grads, lr):
    return params - lr * grads


def train(params, grads):
    for _ in range(5):
        params = step(params, grads, lr=0.1)
    return params
