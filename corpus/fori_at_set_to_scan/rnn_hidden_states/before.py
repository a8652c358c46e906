from functools import partial

import jax
import jax.numpy as jnp
from jax import lax


@partial(jax.jit, static_argnames="steps")
def rnn(w, b, steps):
    h = jnp.zeros(w.shape[0])
    states = jnp.zeros((steps, w.shape[0]))

    def body(i, carry):
        h, states = carry
        h = jnp.tanh(w @ h + b)
        states = states.at[i].set(h)
        return h, states

    h, states = lax.fori_loop(0, steps, body, (h, states))
    return states
