import jax.numpy as jnp


def convert_ell(ell, dim):
    # Modelled on numpyro.contrib.hsgp: a Python number repeated into a list, converted once on the host.
    if isinstance(ell, (float, int)):
        ell = jnp.array([ell] * dim)[..., None]
    return ell
