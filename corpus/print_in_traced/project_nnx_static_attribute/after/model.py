import jax
from flax import nnx


class Foo(nnx.Module):
    def __init__(self, dim, rngs):
        self.w = nnx.Param(jax.random.normal(rngs.param(), (dim, dim)))
        self.dim = dim
        self.traced_dim = nnx.Param(dim)  # This became traced!
        self.rng = rngs
