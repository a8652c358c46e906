import jax
import jax.numpy as jnp


@jax.jit
def adapt(params, grads, scale):
    loss = jnp.sum(grads**2)
    # Halve the step when the gradient is large.
    if loss > 10.0:
        scale = scale * 0.5
    return params - scale * grads
