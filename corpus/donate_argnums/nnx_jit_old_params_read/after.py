import jax
import jax.numpy as jnp
import optax
from flax import nnx
from functools import partial




class MLP(nnx.Module):
    def __init__(self, din, dhidden, dout, *, rngs):
        self.linear1 = nnx.Linear(din, dhidden, rngs=rngs)
        self.linear2 = nnx.Linear(dhidden, dout, rngs=rngs)

    def __call__(self, x):
        return self.linear2(nnx.relu(self.linear1(x)))


tx = optax.adamw(1e-3)
graphdef, _ = nnx.split(MLP(2, 16, 1, rngs=nnx.Rngs(0)), nnx.Param)


@partial(nnx.jit, donate_argnums=1)
def _train_step(params, opt_state, x, y):
    def loss_fn(params):
        model = nnx.merge(graphdef, params)
        return jnp.mean((model(x) - y) ** 2)

    loss, grads = nnx.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss


def train(x, y, steps=200):
    _, params = nnx.split(MLP(2, 16, 1, rngs=nnx.Rngs(0)), nnx.Param)
    opt_state = tx.init(params)
    initial = params
    for _ in range(steps):
        params, opt_state, loss = _train_step(params, opt_state, x, y)
    moved = jax.tree.map(lambda new, old: jnp.max(jnp.abs(new - old)), params, initial)
    return nnx.merge(graphdef, params), loss, moved
