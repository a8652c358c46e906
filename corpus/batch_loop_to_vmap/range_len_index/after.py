import jax
import jax.numpy as jnp


def normalize(x, eps):
    return x / (jnp.linalg.norm(x) + eps)


def normalize_rows(rows: jax.Array, eps=1e-6):
    return jax.vmap(normalize, in_axes=(0, None))(rows, eps)
