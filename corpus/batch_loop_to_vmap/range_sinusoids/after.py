"""One row of sinusoidal features per time step (eager): range(n) with the step used as a number."""
import jax
import jax.numpy as jnp


def sinusoids(n, freqs: jax.Array):
    def body(t):
        return jnp.sin(freqs * t)
    return jax.vmap(body)(jnp.arange(n))
