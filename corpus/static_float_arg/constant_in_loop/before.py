from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=2)
def step(params, grads, lr):
    return params - lr * grads


def train(params, grads):
    for _ in range(5):
        lr = 0.1  # rebound each iteration, but always to the same float: one compilation
        params = step(params, grads, lr)
    return params
