import jax
import jax.numpy as jnp


@jax.jit
def decayed_energy(x):
    total = 0.0
    scale = jnp.ones_like(x)
    def body(step, carry):  # fifty damping steps
        total, scale = carry
        # energy of the current state
        total = total + jnp.sum((x * scale) ** 2)
        scale = scale * 0.9
        # end of step
        return total, scale
    total, scale = jax.lax.fori_loop(0, 50, body, (total, scale))
    return total, scale
