"""Code that runs on old and new JAX alike: the names are bound to the new API or to the old one, whichever this
JAX has, so nothing is reported or rewritten."""

import jax.numpy as jnp

try:
    from jax.extend.backend import get_backend
except ImportError:  # JAX before 0.4.16
    from jax.lib.xla_bridge import get_backend

try:
    from jax.random import permutation as _permutation

    def shuffle(key, x):
        return _permutation(key, x, independent=True)
except ImportError:
    from jax.random import shuffle

NEG_INF = getattr(jnp, "NINF", -jnp.inf)


def clipped_log(x):
    floor = NEG_INF if get_backend().platform == "cpu" else -1e30
    return jnp.maximum(jnp.log(x), floor)
