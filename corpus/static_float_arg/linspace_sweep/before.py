from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@partial(jax.jit, static_argnums=(1,))
def shrink(x, threshold):
    return jnp.sign(x) * jnp.maximum(jnp.abs(x) - threshold, 0.0)


def path(x):
    out = []
    for threshold in np.linspace(0.0, 1.0, 5):
        out.append(shrink(x, threshold))
    return jnp.stack(out)
