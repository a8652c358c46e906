import jax
import jax.numpy as jnp


@jax.jit
def smooth_path(xs: jax.Array):
    state = jnp.zeros(xs.shape[1])
    # One output per row.
    # the smoothed rows
    def step(state, x):  # walk the rows
        # blend the new row in
        state = 0.9 * state + 0.1 * x
        # keep it
        # done
        return state, state
    state, path = jax.lax.scan(step, state, xs)
    return path
