import jax
import jax.numpy as jnp


@jax.jit
def step(x, v, t):
    if t < 1.0:
        a = -jnp.sin(x)  # pendulum force, a local of this branch
        v = v + 0.1 * a
        x = x + 0.1 * v
    else:
        v = 0.5 * v  # damped once t >= 1

        x = x + 0.1 * v
    return x, v
