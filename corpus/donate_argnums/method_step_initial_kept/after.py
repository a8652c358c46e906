import functools

import jax
import jax.numpy as jnp
import optax


class Learner:
    def __init__(self, learning_rate, num_steps):
        self._opt = optax.adam(learning_rate)
        self._num_steps = num_steps

    def _loss(self, params, batch):
        x, y = batch
        prediction = x @ params["w"] + params["b"]
        return jnp.mean((prediction - y) ** 2)

    @functools.partial(jax.jit, static_argnums=0, donate_argnums=2)
    def update(self, params, opt_state, batch):
        loss, grads = jax.value_and_grad(self._loss)(params, batch)
        updates, opt_state = self._opt.update(grads, opt_state)
        params = optax.apply_updates(params, updates)
        return params, opt_state, loss

    def run(self, x, y):
        params = {"w": jnp.zeros((x.shape[1],)), "b": jnp.zeros(())}
        opt_state = self._opt.init(params)
        initial = params
        losses = []
        for _ in range(self._num_steps):
            params, opt_state, loss = self.update(params, opt_state, (x, y))
            losses.append(loss)
        moved = jax.tree.map(lambda new, old: jnp.max(jnp.abs(new - old)), params, initial)
        return params, jnp.stack(losses), moved


def train(x, y):
    return Learner(1e-2, 5).run(x, y)
