"""The reference's bad_parallel_step: SGD under pmap without averaging the gradients."""

from functools import partial

import jax
import jax.numpy as jnp


def loss_fn(params, batch):
    return jnp.mean((batch @ params) ** 2)


@partial(jax.pmap, axis_name="devices")
def bad_parallel_step(params, batch):
    grads = jax.grad(loss_fn)(params, batch)
    # Forgetting pmean: each device diverges independently
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)


def run(params, batch):
    replicated = jnp.stack([params] * jax.local_device_count())
    return bad_parallel_step(replicated, batch.reshape(jax.local_device_count(), -1, batch.shape[-1]))
