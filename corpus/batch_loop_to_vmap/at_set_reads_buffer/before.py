"""Each row is computed from the rows written before it (the buffer is read in the loop): not a batch."""
import jax
import jax.numpy as jnp


def residuals(xs: jax.Array):
    out = jnp.zeros_like(xs)
    for i in range(xs.shape[0]):
        out = out.at[i].set(xs[i] - out.sum(axis=0))
    return out
