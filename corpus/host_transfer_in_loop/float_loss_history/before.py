from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, donate_argnums=0)
def update(params, batch):
    loss = jnp.sum((params - batch) ** 2)
    return params - 0.05 * (params - batch), loss


def fit(params, batches):
    history = []
    for batch in batches:
        params, loss = update(params, batch)
        history.append(float(loss))
    return params, history
