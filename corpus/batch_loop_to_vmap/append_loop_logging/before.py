"""The loop logs each element: vmap would print once, with tracers. Reported without a fix."""
import jax
import jax.numpy as jnp


def scaled(xs: jax.Array, scale):
    ys = []
    for x in xs:
        y = x * scale
        print("norm", jnp.linalg.norm(y))
        ys.append(y)
    return jnp.stack(ys)
