import jax
import jax.numpy as jnp

N_STEPS = 200
LEARNING_RATE = 0.05


def gradient(x, target):
    return 2.0 * (x - target) + 0.1 * jnp.sin(x)


@jax.jit
def descend(x, target):
    def body(_, x):
        return x - LEARNING_RATE * gradient(x, target)
    x = jax.lax.fori_loop(0, N_STEPS, body, x)
    return x
