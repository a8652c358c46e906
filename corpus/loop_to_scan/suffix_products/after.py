import jax
import jax.numpy as jnp


@jax.jit
def suffix_products(xs: jax.Array):
    acc = jnp.ones(xs.shape[1:])
    def step(acc, x):
        acc = acc * x
        return acc, acc
    acc, products = jax.lax.scan(step, acc, xs, reverse=True)
    return products[::-1]
