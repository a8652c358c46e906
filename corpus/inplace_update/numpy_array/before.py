import jax.numpy as jnp
import numpy as np


def host_buffer(n):
    buf = np.zeros(n, dtype=np.float32)
    for i in range(n):
        buf[i] = i * 0.5
    buf[1:] += 1.0
    return jnp.asarray(buf)
