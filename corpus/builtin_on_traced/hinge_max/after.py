import jax
import jax.numpy as jnp


@jax.jit
def hinge(score, margin):
    return jnp.maximum(1.0 - score * margin, 0.0)
