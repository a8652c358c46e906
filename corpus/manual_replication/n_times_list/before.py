import jax
import jax.numpy as jnp


@jax.jit
def tile_rows(x):
    row = jnp.mean(x, axis=0)
    return jnp.stack(x.shape[0] * [row], axis=0)
