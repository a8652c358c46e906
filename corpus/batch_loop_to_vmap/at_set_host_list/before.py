"""Host-side examples (a Python list of lists) copied into a JAX buffer: not a JAX array's rows."""
import jax.numpy as jnp
import numpy as np


def to_batch(examples):
    out = jnp.zeros((len(examples), 3))
    for i in range(len(examples)):
        out = out.at[i].set(np.asarray(examples[i][:3], dtype=np.float32))
    return out
