import jax
import jax.numpy as jnp


def run(x):
    for _ in range(3):
        with jax.default_device(jax.devices("cpu")[0]):
            x = jax.jit(lambda v: v + 1.0)(x)
    return x
