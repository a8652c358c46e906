import jax
import jax.numpy as jnp


@jax.jit
def pyramid(x):
    # The widths are computed while tracing: a static loop, not a runtime one.
    widths = []
    width = 1
    for _ in range(12):
        width = width * 2
        widths.append(width)
    return x * jnp.array(widths).sum()
