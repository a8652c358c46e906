from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def decay(x, n):
    return jax.lax.fori_loop(0, n, lambda i, x: x * 0.99 + 0.01 * jnp.sin(x), x)
