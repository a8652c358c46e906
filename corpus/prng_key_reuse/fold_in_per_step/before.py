import jax
import jax.numpy as jnp


def per_step_noise(key, steps):
    # fold_in with the step number derives a distinct key per step (numpyro, flax): no reuse.
    out = []
    for step in range(steps):
        step_key = jax.random.fold_in(key, step)
        out.append(jax.random.normal(step_key, (2,)))
    return jnp.stack(out)
