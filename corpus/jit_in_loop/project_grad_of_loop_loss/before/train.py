import jax

from model import absolute, squared


def fit(params, x):
    for loss in (squared, absolute, squared):
        grads = jax.jit(jax.grad(loss))(params, x)
        params = params - 0.1 * grads
    return params


def run(params):
    return fit(params, params * 2.0)
