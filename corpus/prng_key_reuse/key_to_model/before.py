import jax
import jax.numpy as jnp


def init_model(key, x):
    # Code modelled on flax examples: a key handed to a function jaxfix cannot see is not counted.
    params = make_params(key, x.shape[-1])
    noise = jax.random.normal(jax.random.fold_in(key, 1), x.shape)
    return params, x + noise


def make_params(key, n):
    return {"w": jnp.eye(n), "seed": jax.random.key_data(key)}
