import jax.numpy as jnp


def hinge(margin: float) -> float:
    """Hinge loss of one classification margin."""
    return jnp.where(margin > 1.0, 0.0, 1.0 - margin)
