import jax
import jax.numpy as jnp
import optax

inner_optimizer = optax.adam(0.05)


def task_loss(params, x, y):
    prediction = x @ params["w"] + params["b"]
    return jnp.mean((prediction - y) ** 2)


@jax.jit
def adapt(params, x, y):
    """Fine-tune the shared parameters on one task: a fixed number of Adam steps inside one jit."""
    opt_state = inner_optimizer.init(params)
    for _ in range(25):
        grads = jax.grad(task_loss)(params, x, y)
        updates, opt_state = inner_optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
    return params, task_loss(params, x, y)
