import jax
import jax.numpy as jnp


@jax.jit
def squash(x):
    y = jnp.tanh(x)
    jax.debug.print("y {}", y)  # shows a tracer, once, at trace time
    return y * 2.0
