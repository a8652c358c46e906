import flax.linen as nn
import jax
import jax.numpy as jnp


class Critic(nn.Module):
    hidden: int = 32

    @nn.compact
    def __call__(self, observations):
        h = nn.tanh(nn.Dense(self.hidden)(observations))
        return nn.Dense(1)(h)[..., 0]


def make_critic():
    """Whatever this returns, jaxfix does not follow it."""
    return Critic(hidden=16)


critic = make_critic()


@jax.jit
def smoothed_values(variables, observations):
    values = critic.apply(variables, observations)
    smoothed = []
    running = jnp.zeros(())
    for t in range(16):
        running = 0.9 * running + 0.1 * values[t]
        smoothed.append(running)
    return jnp.stack(smoothed)
