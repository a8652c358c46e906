import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def train_step(params, batch):
    loss = jnp.mean((params * batch) ** 2)
    return params * 0.99, {"loss": loss, "norm": jnp.linalg.norm(params)}


def training_loop(params, host_data):
    # The reference's example: the batch goes over every step (not this rule's business) and the metrics come
    # back every step: two transfers the rule reports (device_get, then np.asarray of the result's field).
    for batch in host_data:
        params, metrics = train_step(params, jax.device_put(batch))
        fetched = jax.device_get(metrics)
        norms = np.asarray(metrics["norm"])
    return params
