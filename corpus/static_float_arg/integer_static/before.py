from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def tile(x, n):
    return jnp.tile(x, n)


def grow(x):
    out = []
    for n in range(1, 4):
        out.append(tile(x, n).sum())
    return jnp.stack(out)
