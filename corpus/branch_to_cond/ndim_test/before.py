import jax
import jax.numpy as jnp


@jax.jit
def as_matrix(x):
    if x.ndim == 1:
        x = x[None, :]
    elif x.ndim > 2:
        x = x.reshape(x.shape[0], -1)
    return x @ x.T
