import jax
import jax.numpy as jnp


def damped(x: jax.Array) -> jax.Array:
    # planted: same values, but the original was differentiable and lax.while_loop is not in reverse mode
    _, x = jax.lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, 0.5 * jnp.tanh(c[1])), (0, x))
    return x
