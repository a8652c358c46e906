import jax
import jax.numpy as jnp

mix = jax.jit(lambda x, w: x @ jnp.asarray(w))


def combine(x):
    return mix(x, [0.2, 0.3, 0.5])
