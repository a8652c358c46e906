import jax
import jax.numpy as jnp


@jax.jit
def piecewise(x):
    s = jnp.sum(x)
    def true_fn(x, s):
        x = jnp.cumsum(x)
        s = s - 1.0
        return x, s
    def false_fn(x, s):
        # Negative sums flip the vector.
        def true_fn_2(x):
            return jnp.flip(x)
        def false_fn_2(x):
            return jnp.sort(x)
        x = jax.lax.cond(s < -1.0, true_fn_2, false_fn_2, x)
        return x, s
    x, s = jax.lax.cond(s > 1.0, true_fn, false_fn, x, s)
    return x, s
