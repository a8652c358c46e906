import jax
import jax.numpy as jnp
import optax

optimizer = optax.adam(1e-2)


def loss_fn(params, batch):
    x, y = batch
    prediction = x @ params["w"] + params["b"]
    return jnp.mean((prediction - y) ** 2)


@jax.jit
def update(params, opt_state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


def init(x):
    params = {"w": jnp.zeros((x.shape[1],)), "b": jnp.zeros(())}
    return params, optimizer.init(params)


def train(x, y):
    params, opt_state = init(x)
    losses = []
    for step in range(5):
        params, opt_state, loss = update(params, opt_state, (x, y))
        losses.append(loss)
    return params, jnp.stack(losses)
