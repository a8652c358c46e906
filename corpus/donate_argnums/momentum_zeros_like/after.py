import jax
import jax.numpy as jnp
from functools import partial


def loss(params, x):
    return jnp.mean(jnp.tanh(params * x))


@partial(jax.jit, donate_argnums=(0, 1))
def _momentum_step(params, velocity, x):
    grads = jax.grad(loss)(params, x)
    return params - 0.01 * grads, 0.9 * velocity + grads


def train(x):
    params = x + 1.0
    velocity = jax.tree.map(jnp.zeros_like, params)
    for _ in range(5):
        params, velocity = _momentum_step(params, velocity, x)
    return params, velocity
