"""pjit without shardings, called under a legacy `with mesh:`: pjit replicates the result over the mesh, jax.jit
leaves it on one device. The same values: an unsafe fix, whose message names the `with`."""

import jax
import jax.numpy as jnp
import numpy as np


def loss(params, batch):
    return jnp.mean((batch @ params) ** 2)


def evaluate(params, batch):
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("data",))
    compute = jax.jit(loss, out_shardings=None)
    with mesh:
        return compute(params, batch)
