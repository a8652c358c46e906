"""Mesh and PartitionSpec from their removed experimental homes: imported from jax.sharding, uses unchanged."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P
from jax.sharding import NamedSharding


def place(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    placed = jax.device_put(x, NamedSharding(mesh, P("data")))
    return jnp.sum(placed * placed)
