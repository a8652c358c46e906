import jax
import jax.numpy as jnp
from jax import lax

SPONGE = 4  # rows of the absorbing layer at the top of the domain


def apply_sponge(u):
    """Zero the field in the sponge layer: waves that reach it are absorbed."""

    def clear_row(i, u):
        return u.at[i].set(0.0)

    return lax.fori_loop(0, SPONGE, clear_row, u)


@jax.jit
def wave_step(u, u_prev, c):
    laplacian = jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1) + jnp.roll(u, -1, 1) - 4 * u
    u_next = 2 * u - u_prev + c**2 * laplacian
    return apply_sponge(u_next)
