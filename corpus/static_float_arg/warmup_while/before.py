from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("momentum", "lr"))
def update(params, velocity, grads, momentum, lr):
    velocity = momentum * velocity + grads
    return params - lr * velocity, velocity


def train(params, grads):
    velocity = jnp.zeros_like(params)
    step = 0
    while step < 4:
        # linear warm-up of the learning rate
        lr = 0.1 * (step + 1) / 4
        params, velocity = update(params, velocity, grads, momentum=0.9, lr=lr)
        step += 1
    return params, velocity
