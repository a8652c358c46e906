import jax
import jax.numpy as jnp

from env import Env


def rollout(env, state, steps):
    for t in range(steps):
        state = jax.jit(env.step)(state, jnp.full_like(state, 0.1 * t))
    return state


def run(state):
    return rollout(Env(0.5), state, 6)
