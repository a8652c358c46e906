import jax
import jax.numpy as jnp
import numpy as np

from buffers import ShardedBuffer


def make_mesh():
    devices = np.array(jax.devices()[:1]).reshape(1, 1)
    return jax.sharding.Mesh(devices, ("data", "model"))


def run(batch):
    buffer = ShardedBuffer(capacity=8, mesh=make_mesh(), axis_names=("data",))
    state = buffer.init(batch[0])
    state = buffer.insert(state, batch)
    state = buffer.insert(state, batch * 2.0)
    return state["data"], buffer.total(state)
