import jax
import jax.numpy as jnp


def loss(params, x):
    return jnp.sum((params * x - 1.0) ** 2)


@jax.jit
def _step(params, x, lr):
    grads = jax.grad(loss)(params, x)
    return params - lr * grads


def train(x, lr):
    params = x * 2.0
    for _ in range(3):
        params = _step(params, x, lr)
    return params
