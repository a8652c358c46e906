import jax
import jax.numpy as jnp
from model import encode

encode_fast = jax.jit(encode)


def run(xs):
    h = jnp.zeros(xs.shape[1])
    w = jnp.eye(xs.shape[1]) * 0.5
    return encode_fast(h, xs, w)
