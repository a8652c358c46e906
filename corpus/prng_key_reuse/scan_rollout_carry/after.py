import jax
import jax.numpy as jnp


def rollout(key, obs, steps):
    """A policy rollout: each step samples an action and observation noise from the carried key."""
    logits = jnp.array([0.1, 0.5, 0.2, 0.9])

    def step(carry, _):
        obs, key = carry
        key, subkey = jax.random.split(key)
        action = jax.random.categorical(subkey, logits + obs[:4])
        key, subkey_2 = jax.random.split(key)
        noise = jax.random.normal(subkey_2, obs.shape)
        obs = 0.9 * obs + 0.1 * noise
        return (obs, key), (action, noise)

    _, (actions, noises) = jax.lax.scan(step, (obs, key), None, length=steps)
    return actions, noises
