import jax
import jax.numpy as jnp


def loss(params, x):
    return jnp.sum((params * x - 1.0) ** 2)


@jax.jit
def _step(params, x):
    grads = jax.grad(loss)(params, x)
    return params - 0.05 * grads


def train(params, x):
    for _ in range(3):
        params = _step(params, x)
    return params


def evaluate(x):
    start = x * 2.0
    final = train(start, x)
    return final - start  # the caller still reads its argument
