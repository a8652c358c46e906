"""Padding rows dropped with a filtered comprehension (eager): the result's length depends on the data."""
import jax
import jax.numpy as jnp


def nonzero_rows(xs: jax.Array):
    return jnp.stack([x * 2.0 for x in xs if bool(jnp.any(x != 0))])
