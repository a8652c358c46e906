import jax
import jax.numpy as jnp


@jax.jit
def tile_rows(x):
    row = jnp.mean(x, axis=0)
    return jnp.broadcast_to(row, (x.shape[0],) + row.shape)
