"""Removed APIs without an exact replacement: each gets a hint naming what to use, and nothing is rewritten."""

import jax
import jax.numpy as jnp
from jax.lib import xla_bridge
from jax.sharding import PositionalSharding
from jax.util import safe_map


def shard_rows(batch):
    # PositionalSharding (removed in JAX 0.7.0): NamedSharding over a Mesh replaces it
    sharding = PositionalSharding(jax.devices()).reshape(-1, 1)
    return jax.device_put(batch, sharding)


def seen_before(ids, vocab):
    return jnp.in1d(ids, vocab)  # removed in JAX 0.4.24; jnp.isin(ids, vocab).ravel() is the same


def to_torch(x):
    import torch.utils.dlpack

    return torch.utils.dlpack.from_dlpack(jax.dlpack.to_dlpack(x))


def device_summary(xs, ys):
    return xla_bridge.device_count(), safe_map(jnp.add, xs, ys)
