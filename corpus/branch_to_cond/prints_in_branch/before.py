import jax
import jax.numpy as jnp


@jax.jit
def logged_step(x, lr):
    loss = jnp.sum(x**2)
    if loss > 1.0:
        print("large loss")  # runs at trace time: lax.cond would trace it for both outcomes
        lr = lr * 0.1
    return x - lr * 2 * x
