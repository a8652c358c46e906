from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="steps")
def smooth(x, steps):
    for _ in range(steps):
        x = 0.5 * (x + jnp.roll(x, 1))
    return x


@jax.jit
def energy(x):
    return jnp.sum(x**2)


# `cfg["steps"]` is a Python int here; under one jit the dict's leaves would be traced, and `smooth` needs it
# static: reported, not fixed.
def step(x, cfg):
    x = smooth(x, steps=cfg["steps"])
    return x, energy(x)


def run(x):
    cfg = {"steps": 2}
    for _ in range(3):
        x, e = step(x, cfg)
    return x, e
