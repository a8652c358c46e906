import jax
import jax.numpy as jnp


@jax.jit
def newton_sqrt(a):
    guess = jnp.maximum(a, 1.0)
    def body(_, guess):
        return 0.5 * (guess + a / guess)
    guess = jax.lax.fori_loop(1, 30, body, guess)
    return guess
