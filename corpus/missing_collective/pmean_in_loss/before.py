"""The loss is averaged across devices inside the differentiated function: the collective's transpose
communicates the gradients, so jaxfix does not second-guess it."""

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.pmap, axis_name="batch")
def train_step(params, batch):
    def global_loss(p):
        local = jnp.mean((batch @ p) ** 2)
        return jax.lax.pmean(local, axis_name="batch")

    grads = jax.grad(global_loss)(params)
    return params - 0.1 * grads


def run(params, batch):
    return train_step(params[None], batch[None])
