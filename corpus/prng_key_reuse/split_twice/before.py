import jax


def init_two_layers(key):
    k1, k2 = jax.random.split(key)
    w1 = jax.random.normal(k1, (3, 3))
    # Splitting the same key again gives the same two keys: w2 is w1.
    k3, k4 = jax.random.split(key)
    w2 = jax.random.normal(k3, (3, 3))
    return w1, w2
