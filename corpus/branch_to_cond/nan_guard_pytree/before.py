import jax
import jax.numpy as jnp


@jax.jit
def guarded_update(params, grads, loss):
    if jnp.isnan(loss):
        new = params  # skip the step
    else:
        new = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    return new
