import time

import jax
import jax.numpy as jnp


@jax.jit
def inference(w, x):
    return jnp.tanh(x @ w)


def run(w, batches):
    # The reference's example: each iteration times only the dispatch of `inference`.
    times = []
    for batch in batches:
        start = time.time()
        result = inference(w, batch)
        times.append(time.time() - start)
    return result
