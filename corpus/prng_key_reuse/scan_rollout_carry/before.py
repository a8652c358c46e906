import jax
import jax.numpy as jnp


def rollout(key, obs, steps):
    """A policy rollout: each step samples an action and observation noise from the carried key."""
    logits = jnp.array([0.1, 0.5, 0.2, 0.9])

    def step(carry, _):
        obs, key = carry
        action = jax.random.categorical(key, logits + obs[:4])
        noise = jax.random.normal(key, obs.shape)
        obs = 0.9 * obs + 0.1 * noise
        return (obs, key), (action, noise)

    _, (actions, noises) = jax.lax.scan(step, (obs, key), None, length=steps)
    return actions, noises
