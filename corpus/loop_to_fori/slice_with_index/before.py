import jax
import jax.numpy as jnp


@jax.jit
def box_blur(x):
    y = jnp.zeros_like(x)
    for i in range(x.shape[0] - 2):
        y = y.at[i + 1].set(jnp.mean(x[i : i + 3]))
    return y
