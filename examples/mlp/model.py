"""A multi-layer perceptron as two functions over a list of (weights, bias) pairs."""

import jax
import jax.numpy as jnp


def init_mlp(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    params = []
    for k, m, n in zip(keys, sizes[:-1], sizes[1:]):
        w = jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m)
        b = jnp.zeros(n)
        params.append((w, b))
    return params


def apply_mlp(params, x):
    *hidden, last = params
    for w, b in hidden:
        x = jax.nn.relu(x @ w + b)
    w, b = last
    return x @ w + b


def count_params(params):
    return sum(p.size for p in jax.tree_util.tree_leaves(params))
