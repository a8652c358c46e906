from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="max_iter")
def jacobi(a, b, max_iter=100):
    d = jnp.diag(a)

    def cond(state):
        _, r, i = state
        return (jnp.linalg.norm(r) > 1e-5) & (i < max_iter)

    def body(state):
        x, r, i = state
        x = x + r / d
        return x, b - a @ x, i + 1

    x0 = jnp.zeros_like(b)
    x, _, _ = lax.while_loop(cond, body, (x0, b - a @ x0, 0))
    return x
