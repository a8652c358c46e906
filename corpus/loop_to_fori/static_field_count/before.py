import dataclasses
import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.tree_util.register_dataclass, data_fields=["scale"], meta_fields=["num_terms"])
@dataclasses.dataclass(frozen=True)
class Series:
    scale: jax.Array
    num_terms: int  # a static field: a Python int under jit


@jax.jit
def log_terms(x, series):
    # `series.num_terms` is static (a meta field), so the loop unrolls at trace time and works.
    for k in range(series.num_terms):
        jax.debug.print("term {k}: {v}", k=k, v=x * series.scale)
    return x * series.scale


def run(x):
    return log_terms(x, Series(jnp.float32(2.0), 3))
