import jax
import jax.numpy as jnp


def tiled(x):
    out = []
    for n in range(1, 4):
        out.append(jnp.sum(jax.jit(lambda v: jnp.tile(v, n))(x)))
    return jnp.stack(out)
