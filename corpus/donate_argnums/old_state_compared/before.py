from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

optimizer = optax.sgd(0.05)


class TrainState(NamedTuple):
    params: jax.Array
    opt_state: optax.OptState


def loss_fn(params, x):
    return jnp.sum((params * x - 1.0) ** 2)


@jax.jit
def train_step(state, x):
    loss, grads = jax.value_and_grad(loss_fn)(state.params, x)
    updates, opt_state = optimizer.update(grads, state.opt_state)
    return TrainState(optax.apply_updates(state.params, updates), opt_state), loss


def change(old, new):
    return jnp.max(jnp.abs(new.params - old.params))


def train(x):
    params = jnp.ones_like(x)
    state = TrainState(params, optimizer.init(params))
    changes = []
    for _ in range(3):
        old = state
        state, _ = train_step(state, x)
        changes.append(change(old, state))
    return state.params, jnp.stack(changes)
