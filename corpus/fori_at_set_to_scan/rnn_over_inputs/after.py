"""The reference's "prefer scan over fori_loop for gradient efficiency" example, as written there."""

import jax
import jax.numpy as jnp
from jax import lax

hidden_size = 8


@jax.jit
def rnn_forward_bad(params, inputs):
    def body(hidden, input_t):
        new_hidden = jnp.tanh(hidden @ params["Wh"] + input_t @ params["Wx"])
        return new_hidden, new_hidden

    init = jnp.zeros(hidden_size)
    _, all_hiddens = lax.scan(body, init, inputs)
    return all_hiddens
