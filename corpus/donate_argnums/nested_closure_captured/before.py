import jax
import jax.numpy as jnp


def anchored(x):
    p = x * 2.0

    # `step` closes over `p`: its first trace keeps the first buffer of `p`, which donation would delete
    @jax.jit
    def step(q):
        g = jax.grad(lambda r: jnp.sum((r - p) ** 2))(q)
        return q - 0.1 * g

    for _ in range(3):
        p = step(p)
    return p
