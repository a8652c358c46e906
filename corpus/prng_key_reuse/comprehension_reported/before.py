import jax
import jax.numpy as jnp


def ensemble(key, n):
    # Every member gets the same initial weights: reported, no fix (no statement to split in).
    return jnp.stack([jax.random.normal(key, (3,)) for _ in range(n)])
