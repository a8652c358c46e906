from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="lr")
def step(params, grads, lr):
    if lr > 0.05:
        grads = jnp.clip(grads, -1.0, 1.0)
    return params - lr * grads


def train(params, grads):
    for i in range(4):
        params = step(params, grads, lr=0.1 * 0.5 ** i)
    return params
