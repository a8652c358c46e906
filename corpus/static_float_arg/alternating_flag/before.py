from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="training")
def forward(x, training):
    if training:
        return x * 0.5
    return x


def run(x):
    outs = []
    for i in range(4):
        outs.append(forward(x, training=i % 2 == 0))
    return jnp.stack(outs)
