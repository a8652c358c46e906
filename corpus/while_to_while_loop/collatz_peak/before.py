import jax
import jax.numpy as jnp


@jax.jit
def collatz_peak(n):
    """The largest value the Collatz sequence from n reaches (an integer loop on a traced int)."""
    peak = n
    while n != 1:
        n = jnp.where(n % 2 == 0, n // 2, 3 * n + 1)
        peak = jnp.maximum(peak, n)
    return peak
