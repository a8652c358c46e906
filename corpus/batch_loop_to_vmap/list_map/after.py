from jax import Array
from jax import numpy as jnp
import jax


def softmax(logits):
    shifted = logits - jnp.max(logits)
    return jnp.exp(shifted) / jnp.sum(jnp.exp(shifted))


def softmax_all(batch: Array):
    return jax.vmap(softmax)(batch)
