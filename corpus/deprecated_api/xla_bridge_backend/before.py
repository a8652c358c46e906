"""Older training code asked `jax.lib.xla_bridge` which backend it runs on; the module is gone in JAX 0.9.0 and
its `get_backend` since 0.8.0. `jax.extend.backend.get_backend` is the same function (`import jax.extend` is
explicit: `import jax` does not load it)."""

import jax
import jax.numpy as jnp
from jax.lib import xla_bridge


def matmul_precision():
    # TPU matmuls default to bfloat16 passes: ask for full float32 there
    if xla_bridge.get_backend().platform == "tpu":
        return jax.lax.Precision.HIGHEST
    return jax.lax.Precision.DEFAULT


def describe_backend():
    backend = jax.lib.xla_bridge.get_backend()
    return f"{backend.platform} with {backend.device_count()} device(s)"


def project(x, w):
    assert describe_backend()
    return jnp.dot(x, w, precision=matmul_precision())
