import jax
import jax.numpy as jnp


def loss_fn(params, x):
    return jnp.mean((x * params - 1.0) ** 2)


def update(params, grads):
    return params - 0.1 * grads


# No piece is jitted: JF504 is about barriers between jits (the step runs op by op; jitting it is another matter).
def train_step(params, x):
    loss = loss_fn(params, x)
    grads = jax.grad(loss_fn)(params, x)
    return update(params, grads), loss


def train(params, x):
    for _ in range(3):
        params, loss = train_step(params, x)
    return params, loss
