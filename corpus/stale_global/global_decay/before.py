"""A learning rate decayed through `global`: the jitted step never sees the new value."""

import jax
import jax.numpy as jnp

learning_rate = 0.1


@jax.jit
def sgd(params, grads):
    return params - learning_rate * grads


def decay():
    global learning_rate
    learning_rate = learning_rate * 0.5


def train(params):
    for _ in range(3):
        params = sgd(params, jnp.ones_like(params))
        decay()
    return params
