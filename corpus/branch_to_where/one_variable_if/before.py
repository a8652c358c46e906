import jax
import jax.numpy as jnp


@jax.jit
def soft_sign(x, t):
    s = jnp.tanh(x)
    if t > 0.5:  # sharpen
        s = s * s * jnp.sign(s)
    else:
        s = 0.5 * s
    return s
