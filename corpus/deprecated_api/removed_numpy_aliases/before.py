"""A small numerics module written against NumPy 1.x names that jax.numpy carried and then removed: each one
was an alias of (or computed exactly what) its replacement computes."""

import jax.numpy as jnp
from jax.util import partial


def curve_stats(x, y):
    points = jnp.row_stack([x, y])  # removed in JAX 0.4.24: jnp.vstack
    area = jnp.trapz(y, x)  # removed in JAX 0.4.24: jax.scipy.integrate.trapezoid
    growth = jnp.cumproduct(1.0 + y / 10.0)  # removed in JAX 0.4.16: jnp.cumprod
    scale = jnp.product(jnp.array([2.0, 3.0]))  # removed in JAX 0.4.16: jnp.prod
    monotone = jnp.alltrue(jnp.diff(x) > 0)  # removed in JAX 0.4.16: jnp.all
    rounded = jnp.round_(area * scale, 2)  # removed in JAX 0.4.38: jnp.round
    l1_norm = partial(jnp.linalg.norm, ord=1)  # jax.util.partial, removed in 0.2.22: functools.partial
    total = l1_norm(points.ravel())
    return points.shape[0], rounded, growth[-1], monotone, total
