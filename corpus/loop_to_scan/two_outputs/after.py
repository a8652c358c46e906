import jax
import jax.numpy as jnp


@jax.jit
def oscillator(x, v):
    # A damped, driven oscillator: keep both trajectories.
    def step(carry, t):
        v, x = carry
        force = jnp.sin(0.05 * t) - 0.1 * v - x
        v = v + 0.01 * force
        x = x + 0.01 * v
        return (v, x), (x, v)
    (v, x), (positions, velocities) = jax.lax.scan(step, (v, x), jnp.arange(24))
    return jnp.moveaxis(positions, 0, 1), velocities
