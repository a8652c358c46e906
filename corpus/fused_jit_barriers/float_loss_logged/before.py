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


# Logging `float(loss)` pulls the value to the host inside the step: jit cannot trace it.
def train_step(params, x, log):
    loss = loss_fn(params, x)
    log.append(float(loss))
    grads = grad_fn(params, x)
    return update(params, grads)


def train(params, x):
    log = []
    for _ in range(3):
        params = train_step(params, x, log)
    return params, jnp.array(log)
