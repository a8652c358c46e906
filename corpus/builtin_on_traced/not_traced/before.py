import jax.numpy as jnp


def eager_hinge(score):
    return max(1.0 - score, 0.0)
