import jax

from model import loss


def fit(params, batches):
    losses = []
    for x in batches:
        value = jax.jit(loss)(params, x)
        params = params - 0.1 * value * x
        losses.append(value)
    return params, losses


def run(params):
    batches = [params * (i + 1) for i in range(4)]
    return fit(params, batches)
