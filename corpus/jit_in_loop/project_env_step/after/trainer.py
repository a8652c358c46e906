import jax
import jax.numpy as jnp

from env import Env


def rollout(env, state, steps):
    jitted = jax.jit(env.step)
    for t in range(steps):
        state = jitted(state, jnp.full_like(state, 0.1 * t))
    return state


def run(state):
    return rollout(Env(0.5), state, 6)
