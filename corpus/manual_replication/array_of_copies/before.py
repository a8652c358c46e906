import jax.numpy as jnp


def init_ensemble(dim):
    w = jnp.eye(dim) * 0.5
    # jnp.array of n copies: the broadcast is equal for n >= 1; with n = 0, jnp.array([]) would be an empty
    # 1-d array, which the broadcast does not give: an unsafe fix. Here n is 4.
    return jnp.array([w] * 4)
