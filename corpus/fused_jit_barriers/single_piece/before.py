import jax
import jax.numpy as jnp


@jax.jit
def loss_fn(params, x):
    return jnp.mean((x * params - 1.0) ** 2)


@jax.jit
def grad_fn(params, x):
    return jax.grad(lambda p: jnp.mean((x * p - 1.0) ** 2))(params)


@jax.jit
def update(params, grads):
    return params - 0.1 * grads


# One jitted call per step: no barrier between pieces to remove.
def train_step(params, x):
    grads = grad_fn(params, x)
    return params - 0.1 * grads


def train(params, x):
    for _ in range(3):
        params = train_step(params, x)
    return params
