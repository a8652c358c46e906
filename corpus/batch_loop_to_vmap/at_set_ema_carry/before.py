"""An exponential moving average written row by row: `prev` flows from one step to the next (a scan)."""
import jax
import jax.numpy as jnp


def ema(xs: jax.Array, decay=0.9):
    out = jnp.zeros_like(xs)
    prev = jnp.zeros(xs.shape[1:])
    for i in range(xs.shape[0]):
        prev = decay * prev + (1 - decay) * xs[i]
        out = out.at[i].set(prev)
    return out
