import functools

import jax
import jax.numpy as jnp


def task_loss(params, x, y):
    prediction = x @ params["w"] + params["b"]
    return jnp.mean((prediction - y) ** 2)


@functools.partial(jax.jit, static_argnums=0)
def adapt(optimizer, params, x, y):
    """The same steps with the optimizer passed in: nothing tells whether its `update` changes it."""
    opt_state = optimizer.init(params)
    for _ in range(25):
        grads = jax.grad(task_loss)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = jax.tree.map(lambda p, u: p + u, params, updates)
    return params, task_loss(params, x, y)


def run(params, x, y):
    import optax

    return adapt(optax.adam(0.05), params, x, y)
