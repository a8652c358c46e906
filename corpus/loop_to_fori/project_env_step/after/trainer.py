import jax

from env import Env


def run(state, action):
    # The trainer jits the environment's bound method: `Env.step` runs under tracing.
    env = Env(20)
    step = jax.jit(env.step)
    return step(state, action)
