"""The legacy jax.experimental.shard_map.shard_map (deprecated in JAX 0.8.0) becomes jax.shard_map (unsafe fix)."""

import jax
import numpy as np
from jax.experimental.shard_map import shard_map
from jax.sharding import Mesh, PartitionSpec as P


def scaled(x):
    mesh = Mesh(np.array(jax.devices()[:1]), ("i",))
    f = shard_map(lambda block: block * 2 + 1, mesh, P("i"), P("i"), check_rep=True)
    return f(x)
