import functools

import jax
import jax.numpy as jnp


def loss_fn(params, x):
    return jnp.mean((jnp.tanh(x * params) - 0.5) ** 2)


@functools.partial(jax.pmap, axis_name="devices", donate_argnums=0)
def update(params, x):
    grads = jax.grad(loss_fn)(params, x)
    grads = jax.lax.pmean(grads, axis_name="devices")
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)


def train(x):
    params = jnp.ones_like(x)
    for _ in range(3):
        params = update(params, x)
    return params
