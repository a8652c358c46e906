from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="n")
def positional_table(freqs, n):
    def fill(i, table):
        return table.at[i].set(jnp.cos(freqs * i))

    table = lax.fori_loop(0, n, fill, jnp.zeros((n, freqs.shape[0])))
    return table
