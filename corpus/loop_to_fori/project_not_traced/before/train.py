import jax.numpy as jnp

from model import relax


def run(x):
    # Nothing traces `relax`: its loop runs in Python on concrete values, as intended.
    return relax(x, 40) + jnp.ones_like(x)
