"""lax.fori_loop traces its body whether or not the caller is jitted, and jax.grad of this function pays the
same price: the rule does not need traced code."""

import jax.numpy as jnp
from jax import lax


def logistic_orbit(r, x0, steps=100):
    orbit = jnp.zeros(steps)

    def body(i, carry):
        x, orbit = carry
        x = r * x * (1.0 - x)
        orbit = orbit.at[i].set(x)
        return x, orbit

    x, orbit = lax.fori_loop(0, steps, body, (x0, orbit))
    return orbit
