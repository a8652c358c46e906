import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def weighted_rows(x, w: jax.Array):
    acc = jnp.zeros_like(x[0])
    for i in range(x.shape[0]):
        acc = acc + w[i] * x[i]
    return lax.stop_gradient(acc)
