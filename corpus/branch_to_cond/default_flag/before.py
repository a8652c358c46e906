import jax
import jax.numpy as jnp


@jax.jit
def maybe_normalize(x, normalize=False, eps=1e-6):
    # A parameter left at its default is not traced by jit: `if normalize` sees the Python bool.
    if normalize:
        x = x / (jnp.linalg.norm(x) + eps)
    return x
