import jax.numpy as jnp
from flax import nnx

from model import Foo


@nnx.jit
def inspect(model):
    print(f"{model.dim = }")
    print(f"{model.traced_dim.value = }")  # This is being traced
    if model.dim == 4:
        print("Code path based on static data value works fine.")
    return model.traced_dim.value * 2


@nnx.jit
def forward(model, x):
    logits = x @ model.w.value
    print(f"{model.dim} features, weight norm", jnp.linalg.norm(model.w.value))
    print("logits", logits)
    return logits


foo = Foo(4, nnx.Rngs(0))
inspect(foo)
forward(foo, jnp.ones((2, 4)))
