"""A training script's start-up: persistent compilation cache and backend reset through APIs JAX removed.
`initialize_cache` (removed in JAX 0.8.0) and `set_cache_dir` have the same body (they set
`jax_compilation_cache_dir`); `jax.clear_backends` (removed in 0.4.36) is `jax.extend.backend.clear_backends`.
Not run by the tests: both change process-wide state."""

import os

import jax
from jax.experimental.compilation_cache import compilation_cache as cc
import jax.extend.backend


def setup(cache_dir=os.path.expanduser("~/.cache/jax")):
    cc.set_cache_dir(cache_dir)
    jax.extend.backend.clear_backends()  # pick up JAX_PLATFORMS set by the launcher
    return jax.devices()
