import jax
import jax.numpy as jnp


@jax.jit
def step(x, v, t):
    def true_fn(x, v):
        a = -jnp.sin(x)  # pendulum force, a local of this branch
        v = v + 0.1 * a
        x = x + 0.1 * v
        return x, v
    def false_fn(x, v):
        v = 0.5 * v  # damped once t >= 1

        x = x + 0.1 * v
        return x, v
    x, v = jax.lax.cond(t < 1.0, true_fn, false_fn, x, v)
    return x, v
