import jax

import configs
import solver
from overrides import with_overrides


def make_step(num_steps):
    config = configs.get_config()
    config = with_overrides(config, num_steps=num_steps)

    @jax.jit
    def step(x):
        return solver.relax(x, config)

    return step
