import jax
import jax.numpy as jnp


@jax.jit
def smooth_path(xs: jax.Array):
    state = jnp.zeros(xs.shape[1])
    # One output per row.
    path = []  # the smoothed rows
    for x in xs:  # walk the rows
        # blend the new row in
        state = 0.9 * state + 0.1 * x
        path.append(state)  # keep it
        # done
    return jnp.stack(path)
