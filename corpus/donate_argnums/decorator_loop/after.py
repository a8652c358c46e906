import jax
import jax.numpy as jnp
from functools import partial


def loss(params, x):
    return jnp.sum((params * x - 1.0) ** 2)


@partial(jax.jit, donate_argnums=0)
def _step(params, x):
    grads = jax.grad(loss)(params, x)
    return params - 0.05 * grads


def train(x):
    params = jnp.zeros_like(x)
    for _ in range(20):
        params = _step(params, x)  # the old params are dead after this line
    return params
