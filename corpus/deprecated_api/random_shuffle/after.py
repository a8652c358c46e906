"""An epoch of shuffled minibatches drawn with `jax.random.shuffle` (deprecated in JAX 0.1.66, removed in 0.4.31).
`jax.random.permutation(..., independent=True)` runs the same shuffle; the fix is unsafe only because a 0-d `x`
differs (shuffle returned it as it was, permutation permutes `arange(x)`), which no call here passes."""

import jax
import jax.numpy as jnp


def epoch_batches(key, data, batch_size):
    order = jax.random.permutation(key, jnp.arange(data.shape[0]), independent=True)
    return data[order].reshape(-1, batch_size, *data.shape[1:]), order


def epoch_mean(key, data, batch_size):
    batches, order = epoch_batches(key, data, batch_size)
    batch_means = jax.vmap(jnp.mean)(batches)
    # every row lands in exactly one batch: the sorted order is 0..n-1, whatever the key
    return jnp.mean(batch_means), jnp.sort(order)
