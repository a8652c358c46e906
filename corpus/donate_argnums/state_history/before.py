from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

optimizer = optax.sgd(0.1)


class TrainState(NamedTuple):
    params: jax.Array
    opt_state: optax.OptState


def loss_fn(params, x):
    return jnp.mean((jnp.sin(params) - x) ** 2)


@jax.jit
def train_step(state, x):
    loss, grads = jax.value_and_grad(loss_fn)(state.params, x)
    updates, opt_state = optimizer.update(grads, state.opt_state)
    return TrainState(optax.apply_updates(state.params, updates), opt_state), loss


def train(x):
    params = jnp.zeros_like(x)
    state = TrainState(params, optimizer.init(params))
    history = [state]
    for _ in range(3):
        state, _ = train_step(state, x)
        history.append(state)
    return jnp.stack([s.params for s in history])
