import jax
import jax.numpy as jnp


def replicate(tree):
    # Modelled on flax.jax_utils.replicate: one copy per device, placed with a sharding at once.
    devices = jax.local_devices()
    mesh = jax.sharding.Mesh(devices, ("batch",))
    sharding = jax.NamedSharding(mesh, jax.P("batch"))

    def _replicate(x):
        return jax.device_put(jnp.stack([x] * len(devices)), sharding)

    return jax.tree_util.tree_map(_replicate, tree)
