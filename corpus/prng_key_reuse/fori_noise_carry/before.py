import jax
import jax.numpy as jnp


def diffuse(x, key, steps):
    """Noisy diffusion in a fori_loop: the key rides in the carry, but the body never advances it."""
    path = jnp.zeros((steps,) + x.shape)

    def body(i, state):
        x, path, key = state
        x = x + 0.1 * jax.random.normal(key, x.shape)
        path = path.at[i].set(x)
        return x, path, key

    _, path, _ = jax.lax.fori_loop(0, steps, body, (x, path, key))
    return path
