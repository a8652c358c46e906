import jax.numpy as jnp


def update(delta):
    x = jnp.ones(5)
    x = x.at[0].add(delta)
    x = x.at[1].subtract(delta)
    x = x.at[2].multiply(delta)
    x = x.at[3].divide(delta)
    x = x.at[4].power(3)
    x = x.at[1:3].power(2)
    x = x.at[-1].add(x[0])
    return x
