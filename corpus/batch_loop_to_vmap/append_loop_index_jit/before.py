import jax
import jax.numpy as jnp
from functools import partial


def distance(center, point):
    return jnp.sqrt(jnp.sum((point - center) ** 2))


@partial(jax.jit, static_argnums=())
def distances(center, points: jax.Array):
    out = []
    for i in range(points.shape[0]):
        out.append(distance(center, points[i]))
    return jnp.array(out)
