import jax
import jax.random as jr


def three(key):
    a = jr.uniform(key, (5,))
    b = jr.uniform(key, (5,))
    c = jr.uniform(key, (5,))
    return a, b, c
