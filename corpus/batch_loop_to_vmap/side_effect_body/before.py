"""The function records each element in a module-level list: a side effect jax.vmap would run once."""
import jax
import jax.numpy as jnp

SEEN = []


def score(w, x):
    SEEN.append(x)
    return jnp.dot(w, x)


def scores(w, xs: jax.Array):
    return jnp.stack([score(w, x) for x in xs])
