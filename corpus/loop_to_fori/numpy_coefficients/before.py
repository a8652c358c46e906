import jax
import jax.numpy as jnp
import numpy as np

COEFFICIENTS = np.array([0.5, -1.0, 2.0, 0.25, 1.5, -0.75, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])


@jax.jit
def horner(x):
    y = jnp.zeros_like(x)
    # Indexing a NumPy array needs a Python int: the loop stays in Python.
    for k in range(len(COEFFICIENTS)):
        y = y * x + COEFFICIENTS[k]
    for c in COEFFICIENTS:
        y = y + c
    return y
