"""A for-append-stack loop with a local temporary and comments: the body becomes a local function."""
import jax
import jax.numpy as jnp


def features(w, b, xs: jax.Array):
    # one feature vector per example
    def body(x):
        h = jnp.tanh(w @ x + b)  # hidden layer
        return h / (1.0 + jnp.linalg.norm(h))
    feats = jax.vmap(body)(xs)  # rows of the batch
    return feats
