import jax
import jax.numpy as jnp


@jax.jit
def mlp_activations(params, x):
    # One step per layer: a loop over a list of (weight, bias) pairs, each of its own shape.
    activations = []
    for w, b in params:
        x = jnp.tanh(x @ w + b)
        activations.append(x)
    for layer in params:
        x = x + layer[1].sum()
    return x, activations
