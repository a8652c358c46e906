from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=2)
def forward(params, x, depth):
    for _ in range(depth):
        x = jnp.tanh(x * params)
    return x


@jax.jit
def residual(out, target):
    return out - target


def step(params, x, target, depth):
    out = forward(params, x, depth)
    err = residual(out, target)
    return params - 0.1 * jnp.mean(err * x), err


def run(params, x, target):
    for _ in range(3):
        params, err = step(params, x, target, 2)
    return params, err
