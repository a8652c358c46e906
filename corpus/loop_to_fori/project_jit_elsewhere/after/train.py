import jax
import jax.numpy as jnp

from model import relax

fast_relax = jax.jit(relax, static_argnums=1)


def run(x):
    return fast_relax(x, 40) + jnp.ones_like(x)
