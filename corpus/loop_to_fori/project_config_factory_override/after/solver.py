import jax.numpy as jnp
import jax


def relax(x, config):
    # `config.num_steps` is a Python int at trace time: the ConfigDict reaches the jitted step as a constant.
    def body(_, x):
        return (1.0 - config.damping) * x + config.damping * jnp.cos(x)
    x = jax.lax.fori_loop(0, config.num_steps, body, x)
    return x
