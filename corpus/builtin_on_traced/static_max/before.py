import jax
import jax.numpy as jnp


@jax.jit
def head(x, xs):
    n = max(x.shape[0] // 2, 1)
    k = min(len(xs), 4)
    return x[:n] * k
