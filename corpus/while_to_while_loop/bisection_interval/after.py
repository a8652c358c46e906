import jax
import jax.numpy as jnp


@jax.jit
def cube_root(y, lo, hi):
    """Bisection on [lo, hi] for the cube root of y, until the interval is narrow."""
    def cond(carry):
        lo, hi = carry
        return hi - lo > 1e-5
    def body(carry):
        lo, hi = carry
        mid = 0.5 * (lo + hi)
        below = mid * mid * mid < y
        lo = jnp.where(below, mid, lo)
        hi = jnp.where(below, hi, mid)
        return lo, hi
    lo, hi = jax.lax.while_loop(cond, body, (lo, hi))
    return 0.5 * (lo + hi)
