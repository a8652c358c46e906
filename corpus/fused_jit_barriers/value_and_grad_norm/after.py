import jax
import jax.numpy as jnp


def _loss(w, x):
    return jnp.mean(jnp.sin(x @ w))


loss_and_grad = jax.jit(jax.value_and_grad(_loss))


@jax.jit
def clip_update(w, g, scale):
    return w - 0.1 * g * scale


@jax.jit
def step(w, x):
    loss, g = loss_and_grad(w, x)
    norm = jnp.sqrt(jnp.sum(g**2))
    scale = 1.0 / jnp.maximum(norm, 1.0)
    w = clip_update(w, g, scale)
    return w, loss, norm


def optimise(w, x):
    history = []
    for _ in range(4):
        w, loss, norm = step(w, x)
        history.append(loss)
    return w, jnp.stack(history)
