import jax
import jax.numpy as jnp


def logistic_map(r):
    x = jnp.full_like(r, 0.5)
    def body(_, x):
        return r * x * (1.0 - x)
    x = jax.lax.fori_loop(0, 40, body, x)
    return x


population = jax.jit(jax.vmap(logistic_map))
