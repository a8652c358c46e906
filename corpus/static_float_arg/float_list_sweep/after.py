from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def step(params, grads, lr):
    return params - lr * grads


def sweep(params, grads):
    results = []
    for lr in [0.1, 0.03, 0.01]:
        results.append(step(params, grads, lr))
    return jnp.stack(results)
