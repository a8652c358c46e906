import jax
import jax.numpy as jnp


@jax.jit
def halve_through_closure(x):
    # `g` reads `x` from this function's scope: a loop body function would update its own `x`, not this one.
    def g():
        return 2.0 * x
    for i in range(100):
        x = g() / 4.0
    return x
