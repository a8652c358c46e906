"""Training: softmax cross-entropy, Adam from optax, one jitted step per batch."""

from functools import partial

import jax
import optax

from .data import batches
from .model import apply_mlp

optimizer = optax.scale_by_adam()


def loss_fn(params, x, y):
    logits = apply_mlp(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@partial(jax.jit, static_argnums=4)
def train_step(params, opt_state, x, y, learning_rate):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state)
    updates = jax.tree_util.tree_map(lambda u: -learning_rate * u, updates)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss


@jax.jit
def validation_loss(params, x, y):
    loss = loss_fn(params, x, y)
    print("validation loss:", loss)
    return loss


def train(params, x_train, y_train, x_val, y_val, key, num_epochs=5, batch_size=64, learning_rate=0.01):
    opt_state = optimizer.init(params)
    history = []
    for epoch in range(num_epochs):
        lr = learning_rate * 0.5**epoch
        losses = []
        for x, y in batches(key, x_train, y_train, batch_size):
            params, opt_state, loss = train_step(params, opt_state, x, y, lr)
            losses.append(float(loss))
        history.append(sum(losses) / len(losses))
        print(f"epoch {epoch + 1}: loss {history[-1]:.4f}")
        validation_loss(params, x_val, y_val)
    return params, history
