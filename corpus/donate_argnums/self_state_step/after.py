import jax
import jax.numpy as jnp
import optax
from functools import partial

optimizer = optax.sgd(0.05, momentum=0.9)


def loss_fn(params, x, y):
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


@partial(jax.jit, donate_argnums=(0, 1))
def _train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


class Trainer:
    def __init__(self, num_features):
        self.params = {"w": jnp.zeros((num_features,)), "b": jnp.zeros(())}
        self.opt_state = optimizer.init({"w": jnp.zeros((num_features,)), "b": jnp.zeros(())})

    def fit(self, x, y, epochs):
        losses = []
        for _ in range(epochs):
            self.params, self.opt_state, loss = _train_step(self.params, self.opt_state, x, y)
            losses.append(loss)
        return jnp.stack(losses)


def train(x, y):
    trainer = Trainer(x.shape[1])
    return trainer.fit(x, y, 5)
