import jax
import jax.random as jr


def three(key):
    key, subkey = jr.split(key)
    a = jr.uniform(subkey, (5,))
    key, subkey_2 = jr.split(key)
    b = jr.uniform(subkey_2, (5,))
    c = jr.uniform(key, (5,))
    return a, b, c
