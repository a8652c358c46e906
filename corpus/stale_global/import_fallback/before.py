"""A global bound to a module on one path (an optional dependency) is never a value jit captures."""

import jax
import jax.numpy as jnp

try:
    import scipy.special as special
except ImportError:  # pragma: no cover
    special = None


@jax.jit
def log_norm(x):
    if special is None:
        return jnp.log(jnp.sum(jnp.exp(x)))
    return jax.scipy.special.logsumexp(x)


value = log_norm(jnp.zeros(2))
if special is not None:
    special = None


def run():
    return value
