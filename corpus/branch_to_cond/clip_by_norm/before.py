import jax
import jax.numpy as jnp


@jax.jit
def clip_by_norm(g, max_norm):
    norm = jnp.linalg.norm(g)
    # Rescale only when the gradient is too long.
    if norm > max_norm:
        g = g * (max_norm / norm)
    return g
