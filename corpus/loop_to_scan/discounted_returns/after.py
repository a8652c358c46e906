import jax
import jax.numpy as jnp


@jax.jit
def discounted_returns(rewards, gamma):
    g = jnp.zeros_like(rewards[0])
    def step(g, reward_t):
        g = reward_t + gamma * g
        return g, g
    g, returns = jax.lax.scan(step, g, rewards, reverse=True)
    return returns
