import jax
import jax.numpy as jnp


@jax.jit
def oscillator(x, v):
    # A damped, driven oscillator: keep both trajectories.
    positions = []
    velocities = []
    for t in range(24):
        force = jnp.sin(0.05 * t) - 0.1 * v - x
        v = v + 0.01 * force
        x = x + 0.01 * v
        positions.append(x)
        velocities.append(v)
    return jnp.stack(positions, axis=1), jnp.array(velocities)
