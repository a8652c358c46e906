"""Noise per example from one key folded with the example's index. jax.vmap over jnp.arange draws the same
numbers as the loop (the default threefry PRNG; the corpus compares them)."""
import jax
import jax.numpy as jnp


def jitter(key, xs: jax.Array):
    out = jnp.zeros_like(xs)
    for i in range(xs.shape[0]):
        noise = jax.random.normal(jax.random.fold_in(key, i), xs.shape[1:])
        out = out.at[i].set(xs[i] + 0.1 * noise)
    return out
