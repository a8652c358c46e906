"""Per-row normalisation in an append loop whose statements carry comments above them (JF301 crashed on these:
the body went through text, where a comment line set the indentation; found by benchmarks/fuzz.py)."""
import jax
import jax.numpy as jnp


def normalise_rows(xs: jax.Array):
    def body(x):
        # centre the row
        centred = x - jnp.mean(x)
        # then scale it to unit norm
        return centred / (jnp.linalg.norm(centred) + 1e-6)
        # (a zero row stays zero)
    out = jax.vmap(body)(xs)
    return out
