import jax
import jax.numpy as jnp


def loss(params, x):
    return jnp.sum(jnp.tanh(x * params) ** 2)


def sgd(params, grads):
    return params - 0.05 * grads


# The reference's example: jit applied to each piece by assignment.
loss_jit = jax.jit(loss)
grad_jit = jax.jit(jax.grad(loss))
update_jit = jax.jit(sgd)


@jax.jit
def train_step(params, x):
    value = loss_jit(params, x)
    grads = grad_jit(params, x)
    return update_jit(params, grads), value


def fit(params, x):
    step = 0
    while step < 4:
        params, value = train_step(params, x)
        step += 1
    return params, value
