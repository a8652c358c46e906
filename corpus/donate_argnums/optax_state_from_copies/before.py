import jax
import jax.numpy as jnp
import optax
import optax.contrib

optimizer = optax.contrib.prodigy(1.0)


def loss_fn(params, x, y):
    prediction = jnp.tanh(x @ params["w1"]) @ params["w2"]
    return jnp.mean((prediction - y) ** 2)


@jax.jit
def _train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss


def fit(x, y, steps):
    key = jax.random.PRNGKey(0)
    k1, k2 = jax.random.split(key)
    params = {
        "w1": jax.random.normal(k1, (x.shape[1], 8)) * 0.1,
        "w2": jax.random.normal(k2, (8,)) * 0.1,
    }
    opt_state = jax.tree.map(jnp.copy, optimizer.init(params))
    history = []
    for _ in range(steps):
        params, opt_state, loss = _train_step(params, opt_state, x, y)
        history.append(loss)
    return params, jnp.stack(history)
