import jax
import jax.numpy as jnp


@jax.jit
def features(xs, w, b):
    return jnp.stack([jax.nn.relu(x - b) * w for x in xs])


def layer_features(h1, h2, h3, w, b):
    # `features` gets a tuple of three arrays, one per layer: the comprehension walks the tuple's elements,
    # jax.vmap would walk the rows of every leaf
    return features((h1, h2, h3), w, b)
