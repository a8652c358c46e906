"""A per-example MLP applied to a batch with a comprehension: the most common beginner pattern."""
import jax
import jax.numpy as jnp


def mlp(w1, b1, w2, x):
    h = jnp.tanh(x @ w1 + b1)
    return h @ w2


def predict_batch(w1, b1, w2, xs: jax.Array):
    # one example at a time
    return jnp.stack([mlp(w1, b1, w2, x) for x in xs])
