import jax
import jax.numpy as jnp

LOG = []


def print(*values):
    LOG.append(values)


@jax.jit
def scaled(x):
    print("scaling", x)  # the module's own print, not the builtin
    return 3.0 * x
