import jax
import jax.numpy as jnp


def rollout(key, obs, steps):
    # Modelled on PureJaxRL: split at each step, draw from the split-off keys, carry the key left over.
    logits = jnp.array([0.1, 0.5, 0.2, 0.9])

    def env_step(runner_state, _):
        obs, rng = runner_state
        rng, rng_action = jax.random.split(rng)
        action = jax.random.categorical(rng_action, logits + obs[:4])
        rng, rng_noise = jax.random.split(rng)
        obs = 0.9 * obs + 0.1 * jax.random.normal(rng_noise, obs.shape)
        runner_state = (obs, rng)
        return runner_state, action

    _, actions = jax.lax.scan(env_step, (obs, key), None, length=steps)
    return actions
