"""The list is used as a list after the loop (its last element, its length): left alone."""
import jax
import jax.numpy as jnp


def last_and_count(xs: jax.Array):
    ys = []
    for x in xs:
        ys.append(jnp.cumsum(x))
    return ys[-1] * len(ys)
