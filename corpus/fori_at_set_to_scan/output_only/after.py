from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="n")
def positional_table(freqs, n):
    def fill(_, i):
        return None, jnp.cos(freqs * i).astype(float)

    table = lax.scan(fill, None, jnp.arange(n))[1]
    return table
