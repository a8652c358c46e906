from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="norm")
def normalize(x, norm):
    if norm == "l2":
        x = x / jnp.linalg.norm(x)
    elif norm == "max":
        x = x / jnp.max(jnp.abs(x))
    else:
        x = x - jnp.mean(x)
    return x
