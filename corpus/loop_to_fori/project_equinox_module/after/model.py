import equinox as eqx
import jax.numpy as jnp
import jax


class Relax(eqx.Module):
    weight: jnp.ndarray

    def __call__(self, x):
        # An Equinox module is called inside the user's filter_jit'ed step.
        def body(_, x):
            return 0.5 * (x + jnp.cos(self.weight * x))
        x = jax.lax.fori_loop(0, 30, body, x)
        return x
