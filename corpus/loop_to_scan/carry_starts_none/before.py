import jax
import jax.numpy as jnp


@jax.jit
def discounted_returns(rewards: jax.Array, gamma: float):
    ret = None
    returns = []
    for t in reversed(range(rewards.shape[0])):
        ret = rewards[t] if ret is None else rewards[t] + gamma * ret
        returns.append(ret)
    return jnp.stack(list(reversed(returns)))
