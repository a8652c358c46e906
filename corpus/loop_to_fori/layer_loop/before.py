import jax
import jax.numpy as jnp


@jax.jit
def mlp(params, x):
    # One step per layer: a loop over a list of (weight, bias) pairs.
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    for i in range(len(params)):
        x = x + params[i][1].sum()
    return x
