import jax
import jax.numpy as jnp
import numpy as np

WEIGHTS = np.linspace(0.5, 1.5, 40)


@jax.jit
def weighted_path(x):
    # The loop walks NumPy data known while tracing: each weight is a constant of the program.
    path = []
    for w in WEIGHTS:
        x = jnp.sin(w * x)
        path.append(x)
    for t in np.arange(12):
        x = x + t
    return jnp.stack(path), x
