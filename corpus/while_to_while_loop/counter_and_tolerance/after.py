from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="max_iter")
def jacobi(a, b, max_iter=100):
    """Jacobi iteration for a @ x = b until the residual is small, at most max_iter sweeps."""
    x = jnp.zeros_like(b)
    d = jnp.diag(a)
    r = b - a @ x
    i = 0
    def cond(carry):
        _, r, i = carry
        return jnp.logical_and(jnp.linalg.norm(r) > 1e-5, i < max_iter)
    def body(carry):
        x, r, i = carry
        x = x + r / d
        r = b - a @ x
        i += 1
        return x, r, i
    x, r, i = jax.lax.while_loop(cond, body, (x, r, i))
    return x
