import equinox as eqx
import jax
import jax.numpy as jnp
import optax
from functools import partial

optim = optax.adam(3e-3)


def loss_fn(model, x, y):
    prediction = jax.vmap(model)(x)
    return jnp.mean((prediction - y) ** 2)


@partial(eqx.filter_jit, donate="warn-except-first")
def make_step(batch, model, opt_state):
    x, y = batch
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model, x, y)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss


def main(x, y, steps=100):
    model = eqx.nn.MLP(x.shape[-1], "scalar", 32, 2, key=jax.random.PRNGKey(0))
    opt_state = optim.init(eqx.filter(model, eqx.is_array))
    for step in range(steps):
        model, opt_state, loss = make_step((x, y), model, opt_state)
        if step % 10 == 0:
            print(step, loss.item())
    return model
