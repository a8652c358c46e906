import jax
import jax.numpy as jnp


@jax.jit
def halve_counts(x):
    # The counts start as int32 and become float32 after the first step: the Python loop does not mind,
    # lax.fori_loop would reject the carry at trace time.
    counts = jnp.arange(x.shape[0])
    for _ in range(100):
        counts = counts * 0.5 + x
    return counts
