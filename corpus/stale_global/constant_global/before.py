"""Module constants bound once (like optax's and flax's module-level defaults): nothing goes stale."""

import jax
import jax.numpy as jnp

EPS = 1e-6
DEFAULT_DTYPE = jnp.float32


@jax.jit
def safe_log(x):
    return jnp.log(jnp.maximum(x, EPS)).astype(DEFAULT_DTYPE)


def run(x):
    return safe_log(x)
