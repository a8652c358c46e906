from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def decay(x, n):
    for i in range(n):
        x = x * 0.99 + 0.01 * jnp.sin(x)
    return x
