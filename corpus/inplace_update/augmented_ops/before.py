import jax.numpy as jnp


def update(delta):
    x = jnp.ones(5)
    x[0] += delta
    x[1] -= delta
    x[2] *= delta
    x[3] /= delta
    x[4] **= 3
    x[1:3] **= 2
    x[-1] += x[0]
    return x
