import jax
import jax.numpy as jnp


@jax.jit
def decayed_energy(x):
    total = 0.0
    scale = jnp.ones_like(x)
    for step in range(50):  # fifty damping steps
        # energy of the current state
        total = total + jnp.sum((x * scale) ** 2)
        scale = scale * 0.9
        # end of step
    return total, scale
