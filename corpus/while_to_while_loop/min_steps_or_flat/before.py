import jax
import jax.numpy as jnp


@jax.jit
def smooth(x):
    """Averages neighbours at least three times, then until the signal is flat."""
    steps = 0
    while steps < 3 or jnp.max(jnp.abs(jnp.diff(x))) > 0.1:
        x = 0.5 * (x + jnp.roll(x, 1))
        steps = steps + 1
    return x
