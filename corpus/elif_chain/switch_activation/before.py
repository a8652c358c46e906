import jax
import jax.numpy as jnp


@jax.jit
def activate(x, kind):
    if kind == 0:
        y = jnp.tanh(x)
    elif kind == 1:  # ReLU
        y = jax.nn.relu(x)
    else:
        y = x
    return y
