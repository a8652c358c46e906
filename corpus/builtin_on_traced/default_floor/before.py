import jax
import jax.numpy as jnp


@jax.jit
def floored(x, floor=0.0):
    # `floor` keeps its Python default unless a caller passes it: not proven traced, so max() stays Python.
    return x * max(floor, 1.0)
