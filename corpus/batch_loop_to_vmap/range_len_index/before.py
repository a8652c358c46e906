import jax
import jax.numpy as jnp


def normalize(x, eps):
    return x / (jnp.linalg.norm(x) + eps)


def normalize_rows(rows: jax.Array, eps=1e-6):
    return jnp.stack([normalize(rows[i], eps) for i in range(len(rows))])
