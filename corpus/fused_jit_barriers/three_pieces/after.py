import jax
import jax.numpy as jnp


@jax.jit
def loss_fn(params, x, y):
    return jnp.mean((x @ params - y) ** 2)


@jax.jit
def grad_fn(params, x, y):
    return jax.grad(lambda p: jnp.mean((x @ p - y) ** 2))(params)


@jax.jit
def update(params, grads):
    return params - 0.1 * grads


# One training step: three jitted calls, three barriers.
@jax.jit
def train_step(params, x, y):
    loss = loss_fn(params, x, y)
    grads = grad_fn(params, x, y)
    params = update(params, grads)
    return params, loss


def train(params, x, y):
    for _ in range(5):
        params, loss = train_step(params, x, y)
    return params, loss
