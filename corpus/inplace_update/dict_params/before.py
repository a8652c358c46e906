import jax
import jax.numpy as jnp


@jax.jit
def sgd(params, lr):
    params = dict(params)
    params["w"] = params["w"] - lr * jnp.sign(params["w"])
    params["b"] -= lr
    return params
