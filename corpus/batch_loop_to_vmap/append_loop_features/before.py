"""A for-append-stack loop with a local temporary and comments: the body becomes a local function."""
import jax
import jax.numpy as jnp


def features(w, b, xs: jax.Array):
    # one feature vector per example
    feats = []
    for x in xs:  # rows of the batch
        h = jnp.tanh(w @ x + b)  # hidden layer
        feats.append(h / (1.0 + jnp.linalg.norm(h)))
    return jnp.stack(feats)
