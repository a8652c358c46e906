import jax.numpy as jnp


def relax(x, config):
    # `config.num_steps` is a Python int at trace time: the ConfigDict reaches the jitted step as a constant.
    for _ in range(config.num_steps):
        x = (1.0 - config.damping) * x + config.damping * jnp.cos(x)
    return x
