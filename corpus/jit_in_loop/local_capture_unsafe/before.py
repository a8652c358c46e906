import jax
import jax.numpy as jnp


def propagate(x, w):
    scale = jnp.sqrt(w.shape[0])
    for _ in range(6):
        x = jax.jit(lambda h: jnp.tanh(w @ h / scale))(x)
    return x
