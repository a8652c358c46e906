import jax
import jax.numpy as jnp


def damped_good(x: jax.Array) -> jax.Array:
    return jax.lax.fori_loop(0, 4, lambda _, x: 0.5 * jnp.tanh(x), x)  # constant bounds: a scan, differentiable
