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


def train_step(params, x):
    loss = loss_fn(params, x)
    grads = grad_fn(params, x)
    return update(params, grads), loss


# Called once: the barriers cost one dispatch each, once; not worth a new compilation.
def evaluate_once(params, x):
    return train_step(params, x)
