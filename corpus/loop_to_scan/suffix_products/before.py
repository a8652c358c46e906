import jax
import jax.numpy as jnp


@jax.jit
def suffix_products(xs: jax.Array):
    acc = jnp.ones(xs.shape[1:])
    products = []
    for x in reversed(xs):
        acc = acc * x
        products.append(acc)
    return jnp.stack(products)
