from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax

optimizer = optax.sgd(0.1, momentum=0.9)


class TrainState(NamedTuple):
    params: dict
    opt_state: optax.OptState
    step: jax.Array


def loss_fn(params, batch):
    x, y = batch
    return jnp.mean((jnp.tanh(x @ params["w"]) - y) ** 2)


def init(x):
    params = {"w": jnp.full((x.shape[1],), 0.1)}
    return TrainState(params, optimizer.init(params), jnp.array(0))


@jax.jit
def train_step(state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(state.params, batch)
    updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    new_state = TrainState(params, opt_state, state.step + 1)
    return new_state, {"loss": loss}


def train(x, y):
    state = init(x)
    history = []
    for _ in range(4):
        state, metrics = train_step(state, (x, y))
        history.append(metrics["loss"])
    return state.params, jnp.stack(history)
