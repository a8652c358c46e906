import haiku as hk
import jax.numpy as jnp


def forward(x):
    # Under hk.transform: Haiku's apply is what the trainer jits.
    for _ in range(16):
        x = jnp.sin(x) + x
    return hk.Linear(3)(x)


network = hk.transform(forward)
