import flax.linen as nn
import jax
import jax.numpy as jnp


class Critic(nn.Module):
    hidden: int = 32

    @nn.compact
    def __call__(self, observations):
        h = nn.tanh(nn.Dense(self.hidden)(observations))
        return nn.Dense(1)(h)[..., 0]


critic = Critic()


@jax.jit
def smoothed_values(variables, observations):
    values = critic.apply(variables, observations)
    running = jnp.zeros(())
    def step(running, t):
        running = 0.9 * running + 0.1 * values[t]
        return running, running
    running, smoothed = jax.lax.scan(step, running, jnp.arange(16))
    return smoothed
