import jax.numpy as jnp


def hinge(margin: float) -> float:
    """Hinge loss of one classification margin."""
    return jnp.where(margin <= 1.0, 1.0 - margin, 0.0)  # planted: `not margin > 1.0` is not `margin <= 1.0` for a NaN: 0, not NaN
