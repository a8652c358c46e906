import jax
import jax.numpy as jnp


@jax.jit
def guarded_update(params, grads, loss):
    def true_fn():
        return params  # skip the step
    def false_fn():
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    new = jax.lax.cond(jnp.isnan(loss), true_fn, false_fn)
    return new
