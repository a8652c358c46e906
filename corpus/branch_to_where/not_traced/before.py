import jax.numpy as jnp


def eager_log(x):
    return jnp.log(x) if x > 0 else 0.0
