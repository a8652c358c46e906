import jax


def init_two_layers(key, width):
    """Flax-style init: `rng` is kept for the second layer, but it is the same key as `key`."""
    rng = key
    rng, subkey = jax.random.split(rng)
    dense1 = {"kernel": jax.random.normal(subkey, (width, width)) * 0.1}
    dense2 = {"kernel": jax.random.normal(rng, (width, width)) * 0.1}
    return dense1, dense2
