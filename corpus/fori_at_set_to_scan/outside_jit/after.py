"""lax.fori_loop traces its body whether or not the caller is jitted, and jax.grad of this function pays the
same price: the rule does not need traced code."""

import jax.numpy as jnp
from jax import lax


def logistic_orbit(r, x0, steps=100):
    def body(x, _):
        x = r * x * (1.0 - x)
        return x, x.astype(float)

    x, orbit = lax.scan(body, x0, length=steps)
    return orbit
