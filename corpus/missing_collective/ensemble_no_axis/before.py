"""pmap without an axis name trains one independent model per device (an ensemble): no collective is
possible, and none is missing."""

import jax
import jax.numpy as jnp


def loss_fn(params, batch):
    return jnp.mean((batch @ params - 1.0) ** 2)


@jax.pmap
def ensemble_step(params, batch):
    grads = jax.grad(loss_fn)(params, batch)
    return params - 0.1 * grads


def run(params, batch):
    return ensemble_step(params[None], batch[None])
