import jax
import jax.numpy as jnp


@jax.jit
def trajectory(a, x):
    points = []
    for _ in range(120):
        x = jnp.cos(a @ x)
        points.append(x)
    # The list is used as a list: its last element and its length.
    return jnp.stack(points), points[-1] * len(points)
