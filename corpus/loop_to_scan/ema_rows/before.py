import jax
import jax.numpy as jnp


@jax.jit
def ema(xs, decay):
    # Exponential moving average over the rows of xs.
    avg = jnp.zeros(xs.shape[1:])
    for x in xs:
        avg = decay * avg + (1.0 - decay) * x
    return avg
