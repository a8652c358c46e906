import jax
import jax.numpy as jnp
import optax

optimizer = optax.sgd(0.05)


def loss_fn(params, x):
    return jnp.sum((params * x - 1.0) ** 2)


@jax.jit
def train_step(params, opt_state, x):
    loss, grads = jax.value_and_grad(loss_fn)(params, x)
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


def init(x):
    params = jnp.ones_like(x)
    return params, optimizer.init(params)


def train(x):
    params, opt_state = init(x)
    for _ in range(3):
        new_params, new_opt_state, loss = train_step(params, opt_state, x)
        params = new_params
        opt_state = new_opt_state
    return params, loss
