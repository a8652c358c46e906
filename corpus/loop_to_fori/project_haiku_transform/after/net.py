import haiku as hk
import jax.numpy as jnp
import jax


def forward(x):
    # Under hk.transform: Haiku's apply is what the trainer jits.
    def body(_, x):
        return jnp.sin(x) + x
    x = jax.lax.fori_loop(0, 16, body, x)
    return hk.Linear(3)(x)


network = hk.transform(forward)
