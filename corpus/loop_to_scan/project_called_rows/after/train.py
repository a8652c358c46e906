import jax
import jax.numpy as jnp

import model


def run(seed):
    key = jax.random.PRNGKey(seed)
    xs = jax.random.normal(key, (8, 4))
    w = jnp.eye(4) * 0.5
    return model.encode(jnp.zeros(4), xs, w)


def warm_up():
    return model.encode(jnp.zeros(4), jnp.ones((8, 4)), jnp.eye(4))
