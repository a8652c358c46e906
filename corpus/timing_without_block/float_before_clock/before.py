import time

import jax
import jax.numpy as jnp


@jax.jit
def loss_fn(w):
    return jnp.sum(w ** 2)


def bench(w):
    start = time.perf_counter()
    loss = loss_fn(w)
    value = float(loss)  # a host transfer waits for the result
    elapsed = time.perf_counter() - start
    start = time.perf_counter()
    loss = loss_fn(w)
    value = loss.item()
    elapsed = time.perf_counter() - start
    return value
