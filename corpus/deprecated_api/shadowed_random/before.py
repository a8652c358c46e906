"""A parameter named `random` (a seeded Python `random.Random`) shadows the `jax.random` module imported at the
top: `random.shuffle` in `host_order` is Python's list shuffle, not the removed `jax.random.shuffle`."""

import random as pyrandom

import jax.numpy as jnp
from jax import random


def host_order(n, random=pyrandom.Random(0)):
    order = list(range(n))
    random.shuffle(order)
    return order


def noisy_rows(key, data):
    rows = data[jnp.array(host_order(data.shape[0]))]
    return rows + 0.01 * random.normal(key, rows.shape)


def total(key, data):
    return jnp.sum(noisy_rows(key, data)) - jnp.sum(data)
