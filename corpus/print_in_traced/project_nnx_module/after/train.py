import optax
from flax import nnx

from model import Encoder


def loss_fn(model, x):
    return ((model(x) - x) ** 2).mean()


@nnx.jit
def train_step(model, optimizer, x):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x)
    optimizer.update(model, grads)
    return loss


def train(batches, features=8):
    model = Encoder(features, 16, nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
    for x in batches:
        train_step(model, optimizer, x)
    return model
