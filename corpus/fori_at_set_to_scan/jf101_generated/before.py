"""What JF101 (loop-to-fori-loop) makes of a Python loop that writes `out = out.at[i].set(h)`: the next pass
of `jaxfix apply` turns it into a scan."""

import jax
import jax.numpy as jnp


@jax.jit
def rnn(w, xs, h):
    out = jnp.zeros((xs.shape[0], h.shape[0]))
    def body(i, carry):
        h, out = carry
        h = jnp.tanh(w @ h + xs[i])
        out = out.at[i].set(h)
        return h, out
    h, out = jax.lax.fori_loop(0, xs.shape[0], body, (h, out))
    return h, out
