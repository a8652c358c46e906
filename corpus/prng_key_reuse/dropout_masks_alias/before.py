from jax import random
import jax.numpy as jnp


def two_dropouts(x, rng):
    """Two dropout layers: with one key they drop the same units."""
    keep1 = random.bernoulli(rng, 0.5, x.shape)
    h = jnp.where(keep1, x / 0.5, 0.0)
    keep2 = random.bernoulli(rng, 0.5, h.shape)
    return keep1, keep2, jnp.where(keep2, h / 0.5, 0.0)
