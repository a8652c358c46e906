import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def warm_up(x):
    buffer = jnp.zeros((64, 3))

    def body(i, carry):
        h, buffer = carry
        h = jnp.tanh(h + x)
        buffer = buffer.at[i].set(h)
        return h, buffer

    h, buffer = lax.fori_loop(0, 40, body, (jnp.zeros(3), buffer))
    return buffer  # rows 40 to 63 keep their zeros
