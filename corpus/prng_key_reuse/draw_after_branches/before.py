import jax


def sample(key, gaussian):
    if gaussian:
        a = jax.random.normal(key, (4,))
    else:
        a = jax.random.uniform(key, (4,))
    b = jax.random.normal(key, (4,))
    return a, b
