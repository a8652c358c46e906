import jax
import jax.numpy as jnp


def squares(n):
    def body(i, x: jax.Array):
        x = x.at[i].set(i * i)
        return x

    return jax.lax.fori_loop(0, n, body, jnp.zeros(5))
