import jax
import jax.numpy as jnp


def loss(params, x):
    return jnp.sum((params * x - 1.0) ** 2)


@jax.jit
def sgd_step(params, x):
    """Called by users in other modules, who may keep their params."""
    grads = jax.grad(loss)(params, x)
    return params - 0.05 * grads
