import jax
import jax.numpy as jnp
from jax import lax


@jax.jit
def smooth(signal, alpha):
    def body(level, signal_t):
        # the running level and the rows so far
        # exponential moving average of the signal up to sample i
        level = alpha * signal_t + (1.0 - alpha) * level
        # one row per sample
        return level, level

    # start from the first sample
    level, smoothed = lax.scan(body, signal[0], signal)
    return smoothed
