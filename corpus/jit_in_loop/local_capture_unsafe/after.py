import jax
import jax.numpy as jnp


def propagate(x, w):
    scale = jnp.sqrt(w.shape[0])
    jitted = jax.jit(lambda h: jnp.tanh(w @ h / scale))
    for _ in range(6):
        x = jitted(x)
    return x
