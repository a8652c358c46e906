import jax


def sample(key):
    # Two draws of the same shape from one key: `noise_b` equals `noise_a`.
    noise_a = jax.random.normal(key, (4,))
    noise_b = jax.random.normal(key, (4,))
    return noise_a, noise_b
