import jax
import jax.numpy as jnp


def triple_sine(x: jax.Array) -> jax.Array:
    # planted: same values, but lax.while_loop cannot be differentiated in reverse mode
    _, x = jax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, x))
    return x
