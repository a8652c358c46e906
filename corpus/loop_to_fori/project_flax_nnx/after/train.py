import optax
from flax import nnx

from model import Refiner


def loss_fn(model, x, y):
    return ((model(x) - y) ** 2).mean()


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss


def train(xs, ys, features=4):
    model = Refiner(features, nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
    for x, y in zip(xs, ys):
        train_step(model, optimizer, x, y)
    return model
