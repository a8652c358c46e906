from jax import Array
from jax import numpy as jnp


def softmax(logits):
    shifted = logits - jnp.max(logits)
    return jnp.exp(shifted) / jnp.sum(jnp.exp(shifted))


def softmax_all(batch: Array):
    return jnp.stack(list(map(softmax, batch)))
