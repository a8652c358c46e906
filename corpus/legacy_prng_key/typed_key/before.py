"""Typed keys from jax.random.key: nothing to suggest."""

import jax


def sample(seed):
    key = jax.random.key(seed)
    first, second = jax.random.split(key)
    return jax.random.uniform(first, (2,)) + jax.random.normal(second, (2,))
