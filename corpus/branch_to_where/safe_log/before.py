import jax
import jax.numpy as jnp


@jax.jit
def safe_log(x):
    # jnp.where would compute log(0) = -inf on the other side, and its gradient would be NaN.
    return jnp.log(x) if x > 0 else 0.0
