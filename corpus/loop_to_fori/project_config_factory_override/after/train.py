import jax

import configs
import solver


def make_step(num_steps):
    config = configs.get_config()
    config.num_steps = num_steps

    @jax.jit
    def step(x):
        return solver.relax(x, config)

    return step
