import jax
import jax.numpy as jnp


def halve_until_small(x):
    while float(jnp.max(jnp.abs(x))) > 1.0:
        x = jax.jit(lambda v: v / 2)(x)
    return x
