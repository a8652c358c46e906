import jax
import jax.numpy as jnp


@jax.jit
def layer(w, b, xs: jax.Array):
    """The element is an expression, not one call: it becomes a local function."""
    outs = jnp.stack([jnp.tanh(w @ x + b) * 0.5 for x in xs], axis=1)  # features first
    return outs
