import jax
import jax.numpy as jnp


def halve_until_small(x):
    """Only jax.grad traces this function: it runs eagerly with concrete values, where a Python `while` on
    an array works (and lax.while_loop would break reverse-mode differentiation). Left alone."""
    while jnp.abs(x) > 0.1:
        x = x / 2.0
    return x


def slope(x):
    return jax.grad(halve_until_small)(x)
