from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def gradient(params, batch):
    return jax.grad(lambda p: jnp.sum((batch @ p) ** 2))(params)


@partial(jax.jit, donate_argnums=(0, 1))
def momentum(params, velocity, grads):
    velocity = 0.9 * velocity + grads
    return params - 0.01 * velocity, velocity


@partial(jax.jit, donate_argnums=(0, 1))
def train_step(params, velocity, batch):
    grads = gradient(params, batch)
    params, velocity = momentum(params, velocity, grads)
    return params, velocity


def train(batch):
    params = jnp.ones(4)
    velocity = jnp.zeros(4)
    for _ in range(5):
        params, velocity = train_step(params, velocity, batch)
    return params, velocity
