import jax
import jax.numpy as jnp


@jax.jit
def doubling(x):
    for _ in range(200):
        x = jnp.concatenate([x, x[-1:] * 2.0])
    return x
