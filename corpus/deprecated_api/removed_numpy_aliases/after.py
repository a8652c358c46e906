"""A small numerics module written against NumPy 1.x names that jax.numpy carried and then removed: each one
was an alias of (or computed exactly what) its replacement computes."""

import jax.numpy as jnp
from functools import partial
import jax


def curve_stats(x, y):
    points = jnp.vstack([x, y])  # removed in JAX 0.4.24: jnp.vstack
    area = jax.scipy.integrate.trapezoid(y, x)  # removed in JAX 0.4.24: jax.scipy.integrate.trapezoid
    growth = jnp.cumprod(1.0 + y / 10.0)  # removed in JAX 0.4.16: jnp.cumprod
    scale = jnp.prod(jnp.array([2.0, 3.0]))  # removed in JAX 0.4.16: jnp.prod
    monotone = jnp.all(jnp.diff(x) > 0)  # removed in JAX 0.4.16: jnp.all
    rounded = jnp.round(area * scale, 2)  # removed in JAX 0.4.38: jnp.round
    l1_norm = partial(jnp.linalg.norm, ord=1)  # jax.util.partial, removed in 0.2.22: functools.partial
    total = l1_norm(points.ravel())
    return points.shape[0], rounded, growth[-1], monotone, total
