import jax
import jax.numpy as jnp
from flax import nnx


class Encoder(nnx.Module):
    def __init__(self, features, hidden, rngs):
        self.features = features
        self.hidden = nnx.Linear(features, hidden, rngs=rngs)
        self.out = nnx.Linear(hidden, features, rngs=rngs)

    def __call__(self, x):
        h = jax.nn.relu(self.hidden(x))
        jax.debug.print("hidden activations {}", h)
        jax.debug.print("encoder of {} features, mean activation {}", str(self.features), jnp.mean(h))
        return self.out(h)
