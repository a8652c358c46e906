import jax
import jax.numpy as jnp


@jax.jit
def refine(x, a):
    converged = jnp.abs(x * x - a) < 1e-6
    if not converged:
        for _ in range(3):  # three Newton steps, unrolled on purpose
            x = 0.5 * (x + a / x)
    return x
