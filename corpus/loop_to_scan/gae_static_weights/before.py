from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("weights",))
def weighted_returns(rewards, weights):
    # `weights` is a static tuple of Python floats: a scan's traced index cannot index it
    ret = 0.0
    returns = []
    for t in reversed(range(len(weights))):
        ret = weights[t] * rewards[t] + 0.9 * ret
        returns.append(ret)
    returns.reverse()
    return jnp.stack(returns)
