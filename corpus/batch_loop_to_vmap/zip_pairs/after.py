import jax
import jax.numpy as jnp


@jax.jit
def pairwise_dots(xs: jax.Array, ys: jax.Array):
    return jax.vmap(jnp.dot)(xs, ys)
