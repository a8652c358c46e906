import jax
import jax.numpy as jnp


def smooth(x):
    jitted = jax.jit(lambda v: 0.5 * v + 0.25 * jnp.roll(v, 1) + 0.25 * jnp.roll(v, -1))
    for _ in range(10):
        # one more smoothing pass
        x = jitted(x)
    return x
