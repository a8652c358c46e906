import haiku as hk
import jax
import optax

from model import forward, mse

net = hk.without_apply_rng(hk.transform(forward))
optimizer = optax.adam(1e-2)


def loss_fn(params, x, y):
    return mse(net.apply(params, x), y)


@jax.jit
def _update(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss


def train(x, y, x_val, y_val, steps=100):
    params = net.init(jax.random.PRNGKey(42), x)
    opt_state = optimizer.init(params)
    for step in range(steps):
        params, opt_state, loss = _update(params, opt_state, x, y)
        if step % 20 == 0:
            val = mse(net.apply(params, x_val), y_val)
            print(f"step {step}: train {loss:.4f} val {val:.4f}")
    return params
