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


STATS = {"steps": 0}


# A print and a counter: under jit both would run once, at trace time.
def train_step(params, x):
    print("step", STATS["steps"])
    STATS["steps"] += 1
    grads = grad_fn(params, x)
    params = update(params, grads)
    return params, loss_fn(params, x)


def train(params, x):
    for _ in range(3):
        params, loss = train_step(params, x)
    return params, loss
