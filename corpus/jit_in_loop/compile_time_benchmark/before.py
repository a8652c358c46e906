"""A benchmark that re-jits on purpose to time compilation (as JAX's own benchmarks do): hoisting the jit would
time a cache hit instead, so it stays as it is."""

import time

import jax
import jax.numpy as jnp


def compile_seconds(x, repeats):
    times = []
    for _ in range(repeats):
        jax.clear_caches()
        start = time.perf_counter()
        jax.jit(lambda v: jnp.tanh(v) * 2.0)(x).block_until_ready()
        times.append(time.perf_counter() - start)
    return len(times)
