import jax
import jax.numpy as jnp
from jax import jit

LEARNING_RATE = 0.2


@jit
def predict(w, x):
    return jnp.tanh(x * w)


@jit
def mse(pred, y):
    return jnp.mean((pred - y) ** 2)


@jit
def grad_mse(w, x, y):
    return jax.grad(lambda v: jnp.mean((jnp.tanh(x * v) - y) ** 2))(w)


@jit
def step(w, batch):
    pred = predict(w, batch["x"])
    loss = mse(pred, batch["y"])
    w = w - LEARNING_RATE * grad_mse(w, batch["x"], batch["y"])
    return w, loss


def train(w, xs, ys):
    batch = {"x": xs, "y": ys}
    for _ in range(3):
        w, loss = step(w, batch)
    return w, loss
