import jax
import jax.numpy as jnp


@jax.jit
def refine(x, a):
    converged = jnp.abs(x * x - a) < 1e-6
    def true_fn(x):
        for _ in range(3):  # three Newton steps, unrolled on purpose
            x = 0.5 * (x + a / x)
        return x
    x = jax.lax.cond(jnp.logical_not(converged), true_fn, lambda x: x, x)
    return x
