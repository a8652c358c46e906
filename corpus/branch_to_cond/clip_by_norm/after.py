import jax
import jax.numpy as jnp


@jax.jit
def clip_by_norm(g, max_norm):
    norm = jnp.linalg.norm(g)
    # Rescale only when the gradient is too long.
    def true_fn(g):
        return g * (max_norm / norm)
    g = jax.lax.cond(norm > max_norm, true_fn, lambda g: g, g)
    return g
