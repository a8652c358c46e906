"""Only the first rows of a padded buffer are written: vmap would return a shorter array."""
import jax
import jax.numpy as jnp


def first_rows(xs: jax.Array):
    out = jnp.zeros((8, xs.shape[1]))
    for i in range(4):
        out = out.at[i].set(jnp.tanh(xs[i]))
    return out
