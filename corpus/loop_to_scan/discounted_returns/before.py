import jax
import jax.numpy as jnp


@jax.jit
def discounted_returns(rewards, gamma):
    g = jnp.zeros_like(rewards[0])
    returns = []
    for t in reversed(range(rewards.shape[0])):
        g = rewards[t] + gamma * g
        returns.append(g)
    return jnp.stack(returns[::-1])
