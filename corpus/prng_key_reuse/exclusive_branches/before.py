import jax


def init(key, kind):
    # Each branch uses the key once: only one of them runs.
    if kind == "normal":
        w = jax.random.normal(key, (3,))
    elif kind == "uniform":
        w = jax.random.uniform(key, (3,))
    else:
        w = jax.random.truncated_normal(key, -2.0, 2.0, (3,))
    return w
