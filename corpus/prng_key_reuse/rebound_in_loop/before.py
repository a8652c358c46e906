import jax
import jax.numpy as jnp


def langevin(x, rng, steps):
    # Modelled on numpyro's samplers: the key is split at the top of each iteration and rebound.
    for _ in range(steps):
        rng, rng_noise = jax.random.split(rng)
        x = x - 0.01 * x + 0.1 * jax.random.normal(rng_noise, x.shape)
    return x
