"""What JF101 (loop-to-fori-loop) makes of a Python loop that writes `out = out.at[i].set(h)`: the next pass
of `jaxfix apply` turns it into a scan."""

import jax
import jax.numpy as jnp


@jax.jit
def rnn(w, xs, h):
    def body(h, x):
        h = jnp.tanh(w @ h + x)
        return h, h.astype(float)
    h, out = jax.lax.scan(body, h, xs)
    return h, out
