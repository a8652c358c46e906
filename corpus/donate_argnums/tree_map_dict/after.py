from functools import partial

import jax
import jax.numpy as jnp


def loss(params, x):
    return jnp.sum((x * params["w"] + params["b"]) ** 2)


@jax.jit
def _init(x):
    return {"w": jnp.ones_like(x), "b": jnp.zeros_like(x)}


@partial(jax.jit, donate_argnums=0)
def _sgd(params, x):
    grads = jax.grad(loss)(params, x)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)


def train(x):
    params = _init(x)
    for _ in range(4):
        params = _sgd(params, x)
    return params
