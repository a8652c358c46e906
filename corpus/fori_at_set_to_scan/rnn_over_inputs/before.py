"""The reference's "prefer scan over fori_loop for gradient efficiency" example, as written there."""

import jax
import jax.numpy as jnp
from jax import lax

hidden_size = 8


@jax.jit
def rnn_forward_bad(params, inputs):
    def body(i, carry):
        hidden, outputs = carry
        new_hidden = jnp.tanh(hidden @ params["Wh"] + inputs[i] @ params["Wx"])
        return (new_hidden, outputs.at[i].set(new_hidden))

    init = (jnp.zeros(hidden_size), jnp.zeros((len(inputs), hidden_size)))
    _, all_hiddens = lax.fori_loop(0, len(inputs), body, init)
    return all_hiddens
