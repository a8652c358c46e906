import jax
import jax.numpy as jnp

ACTIVATION = "gelu"


@jax.jit
def act(x):
    if ACTIVATION == "relu":
        return jax.nn.relu(x)
    elif ACTIVATION == "gelu":
        return jax.nn.gelu(x)
    return x
