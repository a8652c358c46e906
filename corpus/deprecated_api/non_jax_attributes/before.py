"""Attributes with old JAX names on objects that are not JAX: a helper namespace, a class, a library."""

import types

import jax
import jax.numpy as jnp

compat = types.SimpleNamespace(tree_map=lambda f, xs: [f(x) for x in xs], index_update=lambda x, i, y: x.at[i].set(y))


class Params:
    def __init__(self, values):
        self.values = values

    def tree_map(self, f):
        return Params([f(v) for v in self.values])

    def tree_leaves(self):
        return self.values


def run(x):
    params = Params([x, x + 1]).tree_map(jnp.sum)
    doubled = compat.tree_map(lambda v: v * 2, params.tree_leaves())
    return jnp.stack(doubled) + compat.index_update(x, 0, 1.0)[0] + jax.numpy.zeros(())
