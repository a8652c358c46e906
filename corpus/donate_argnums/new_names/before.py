import jax
import jax.numpy as jnp


def loss(params, x):
    return jnp.sum((params * x - 1.0) ** 2)


@jax.jit
def _step(params, x):
    grads = jax.grad(loss)(params, x)
    return params - 0.05 * grads


def train(x):
    params = x * 2.0
    new_params = _step(params, x)
    return new_params - params
