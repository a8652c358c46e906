import jax
import jax.numpy as jnp


@jax.jit
def leaky_relu(x):
    return x if x > 0 else 0.01 * x
