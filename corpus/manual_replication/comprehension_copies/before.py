import jax.numpy as jnp


def init_ensemble(n, dim):
    w = jnp.eye(dim) * 0.5
    # n identical members, built one copy at a time
    members = jnp.stack([w for _ in range(n)])
    return members
