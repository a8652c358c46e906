import jax.numpy as jnp


def total(values):
    return jnp.sum(jnp.asarray(values))


def run():
    # Not jitted: one conversion of the list, eagerly.
    return total([1.0, 2.0, 3.0])
