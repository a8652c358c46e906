import jax
import jax.numpy as jnp


@jax.jit
def orbit(x, n):
    # `n` is traced: range(n) cannot run under jit, and lax.scan needs a static length too.
    points = []
    for _ in range(n):
        x = jnp.array([x[1], -x[0]]) * 0.99
        points.append(x)
    return jnp.stack(points)
