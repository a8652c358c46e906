import jax.numpy as jnp


class Env:
    """A toy environment: `step` relaxes the state toward the action."""

    def __init__(self, substeps):
        self.substeps = substeps

    def step(self, state, action):
        for _ in range(20):
            state = state + 0.1 * jnp.tanh(action - state)
        return state
