"""One row of sinusoidal features per time step (eager): range(n) with the step used as a number."""
import jax
import jax.numpy as jnp


def sinusoids(n, freqs: jax.Array):
    return jnp.stack([jnp.sin(freqs * t) for t in range(n)])
