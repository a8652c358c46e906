"""jax.random.PRNGKey is not deprecated, and typed keys change shapes and dtypes: a hint only, never a rewrite."""

import jax


def sample(seed):
    key = jax.random.PRNGKey(seed)
    first, second = jax.random.split(key)
    return jax.random.uniform(first, (2,)) + key[0] * 0 + second[1] * 0
