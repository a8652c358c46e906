import jax
import jax.numpy as jnp


@jax.jit
def standardize(x):
    mean = jnp.mean(x, axis=0)
    std = jnp.std(x, axis=0)
    jax.debug.print("standardize: x {} {}, mean {}, std {}", str(x.shape), str(x.dtype), mean, std)
    return (x - mean) / (std + 1e-6)
