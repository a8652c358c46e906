import jax
import jax.numpy as jnp

from env import Env


def sweep(state, rates):
    for rate in rates:
        env = Env(rate)  # a new environment on each iteration: `env.step` is another function each time
        state = jax.jit(env.step)(state, jnp.ones_like(state))
    return state


def run(state):
    return sweep(state, [0.5, 0.25, 0.125])
