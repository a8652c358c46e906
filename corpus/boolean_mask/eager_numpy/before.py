"""Masks in plain NumPy/JAX code that nothing jits (like flax's and optax's host-side utilities)."""

import jax.numpy as jnp
import numpy as np


def summary(x):
    x = np.asarray(x)
    finite = x[np.isfinite(x)]
    y = jnp.asarray(x)
    return finite.mean(), y[y > 0].sum()
