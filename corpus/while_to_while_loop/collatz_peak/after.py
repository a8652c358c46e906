import jax
import jax.numpy as jnp


@jax.jit
def collatz_peak(n):
    """The largest value the Collatz sequence from n reaches (an integer loop on a traced int)."""
    peak = n
    def cond(carry):
        n, _ = carry
        return n != 1
    def body(carry):
        n, peak = carry
        n = jnp.where(n % 2 == 0, n // 2, 3 * n + 1)
        peak = jnp.maximum(peak, n)
        return n, peak
    n, peak = jax.lax.while_loop(cond, body, (n, peak))
    return peak
