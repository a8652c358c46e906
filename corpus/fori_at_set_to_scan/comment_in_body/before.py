import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def smooth(signal, alpha):
    def body(i, carry):
        level, smoothed = carry  # the running level and the rows so far
        # exponential moving average of the signal up to sample i
        level = alpha * signal[i] + (1.0 - alpha) * level
        smoothed = smoothed.at[i].set(level)  # one row per sample
        return level, smoothed

    # start from the first sample
    level, smoothed = lax.fori_loop(0, signal.shape[0], body, (signal[0], jnp.zeros_like(signal)))
    return smoothed
