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


def _step(params, x):
    loss = loss_fn(params, x)
    grads = grad_fn(params, x)
    return update(params, grads), loss


# The step is jitted where it is used: the inner jits are already inlined into one program.
train_step = jax.jit(_step)


@jax.jit
def eval_step(params, x):
    loss = loss_fn(params, x)
    grads = grad_fn(params, x)
    return loss, grads


def train(params, x):
    for _ in range(3):
        params, loss = train_step(params, x)
        loss, grads = eval_step(params, x)
    return params, loss
