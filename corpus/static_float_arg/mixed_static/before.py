from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(2, 3))
def step(params, grads, lr, activation):
    out = params - lr * grads
    return jnp.tanh(out) if activation == "tanh" else out


def train(params, grads):
    for epoch in range(4):
        params = step(params, grads, 0.5 / (epoch + 1), "tanh")
    return params
