"""jax.experimental.stax / optimizers (removed in JAX 0.3.16) moved to jax.example_libraries unchanged."""

import jax.numpy as jnp
from jax.experimental import stax
from jax.experimental.optimizers import sgd


def step(x, grad):
    _, relu = stax.Relu
    init, update, get_params = sgd(0.5)
    return get_params(update(0, grad, init(relu((), x))))
