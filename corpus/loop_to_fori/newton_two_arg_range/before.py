import jax
import jax.numpy as jnp


@jax.jit
def newton_sqrt(a):
    guess = jnp.maximum(a, 1.0)
    for _ in range(1, 30):
        guess = 0.5 * (guess + a / guess)
    return guess
