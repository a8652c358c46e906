import jax
import jax.numpy as jnp


def loss(w, x, y):
    pred = x @ w
    err = pred - y
    print("residuals:", err)
    return jnp.sum(err**2)


def gradient(w, x, y):
    return jax.grad(loss)(w, x, y)
