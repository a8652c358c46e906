import jax
import jax.numpy as jnp

seen = []


def remember(v):
    seen.append(v)
    return v


@jax.jit
def record_positive(x):
    s = jnp.sum(x)
    return remember(s) if s > 0 else s
