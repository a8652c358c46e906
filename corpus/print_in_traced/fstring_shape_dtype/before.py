import jax
import jax.numpy as jnp


@jax.jit
def standardize(x):
    mean = jnp.mean(x, axis=0)
    std = jnp.std(x, axis=0)
    print(f"standardize: x {x.shape} {x.dtype}, mean {mean}, std {std}")
    return (x - mean) / (std + 1e-6)
