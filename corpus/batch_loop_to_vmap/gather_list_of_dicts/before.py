"""Results of separate runs kept in a Python list of dicts, stacked per name (as numpyro's calibration code
does): the index only picks list items, nothing is computed per element. Left alone."""
import jax.numpy as jnp


def stack_runs(runs, names, num_runs):
    return {name: jnp.stack([runs[i][name] for i in range(num_runs)]) for name in names}
