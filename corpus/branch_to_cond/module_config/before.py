import jax
import jax.numpy as jnp

USE_LAYERNORM = True
EPS = 1e-5


@jax.jit
def block(x):
    if USE_LAYERNORM:
        x = (x - jnp.mean(x)) / jnp.sqrt(jnp.var(x) + EPS)
    if EPS > 0:
        x = x + EPS
    return jnp.tanh(x)
