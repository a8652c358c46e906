"""A shard_map data-parallel step: the batch is split over the mesh, the parameters replicated."""

from functools import partial

import jax
import jax.numpy as jnp
from jax.experimental.shard_map import shard_map
from jax.sharding import Mesh, PartitionSpec as P

mesh = Mesh(jax.devices()[:1], ("data",))


def loss_fn(w, x):
    return jnp.sum((x @ w - 1.0) ** 2)


@partial(shard_map, mesh=mesh, in_specs=(P(), P("data")), out_specs=P())
def sgd_step(w, x):
    g = jax.grad(loss_fn)(w, x)
    return w - 0.05 * g


def run(w, x):
    return sgd_step(w, x)
