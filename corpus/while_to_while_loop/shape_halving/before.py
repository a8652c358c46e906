import jax
import jax.numpy as jnp


@jax.jit
def pairwise_total(x):
    """Tree reduction: the test reads a shape, which is static; the Python loop unrolls log2(n) times."""
    while x.shape[0] > 1:
        x = x[0::2] + x[1::2]
    return x[0]
