import jax
import jax.numpy as jnp


def squares(n):
    def body(i, x: jax.Array):
        x[i] = i * i
        return x

    return jax.lax.fori_loop(0, n, body, jnp.zeros(5))
