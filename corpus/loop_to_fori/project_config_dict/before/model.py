import haiku as hk
import jax
import ml_collections


class Tower(hk.Module):
    """A residual tower: its depth and width come from the experiment's ConfigDict."""

    def __call__(self, x, settings: ml_collections.ConfigDict):
        # A ConfigDict is never a traced value (JAX rejects it as one): `settings.num_layers` is a Python int at
        # trace time, and the layers unroll as intended.
        for _ in range(settings.num_layers):
            x = x + jax.nn.gelu(hk.Linear(settings.width)(x))
        return x
