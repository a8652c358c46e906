import sys

import jax
import jax.numpy as jnp


@jax.jit
def clipped(x):
    y = jnp.clip(x, -1.0, 1.0)
    print("clipped", y, file=sys.stderr)  # jax.debug.print cannot write to stderr: reported, not fixed
    return y
