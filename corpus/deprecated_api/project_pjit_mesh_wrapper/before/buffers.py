"""A buffer split across a device mesh with pjit: PartitionSpec shardings, calls under `with self._mesh:`."""

import math

import jax
import jax.numpy as jnp
from jax.experimental import pjit


class ShardedBuffer:
    def __init__(self, capacity, mesh, axis_names):
        self._mesh = mesh
        self._num_devices = math.prod(mesh.shape[name] for name in axis_names)
        self._capacity = capacity

        def init(example):
            rows = jnp.zeros((self._num_devices, capacity) + example.shape, example.dtype)
            return {"data": rows, "count": jnp.zeros((self._num_devices,), jnp.int32)}

        def insert(state, samples):
            samples = jnp.reshape(samples, (self._num_devices, -1) + samples.shape[1:])
            count = samples.shape[1]
            data = jax.vmap(lambda d, s, c: jax.lax.dynamic_update_slice_in_dim(d, s, c, 0))(
                state["data"], samples, state["count"]
            )
            return {"data": data, "count": state["count"] + count}

        def total(state):
            return jnp.sum(state["count"])

        partition_spec = jax.sharding.PartitionSpec(axis_names)
        self._partitioned_init = pjit.pjit(init, out_shardings=partition_spec)
        self._partitioned_insert = pjit.pjit(insert, out_shardings=partition_spec)
        self._partitioned_total = pjit.pjit(total, in_shardings=(partition_spec,))

    def init(self, example):
        with self._mesh:
            return self._partitioned_init(example)

    def insert(self, state, samples):
        with self._mesh:
            return self._partitioned_insert(state, samples)

    def total(self, state):
        with self._mesh:
            return self._partitioned_total(state)
