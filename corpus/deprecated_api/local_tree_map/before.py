"""A module-level function and a parameter named like the removed JAX functions: they are not JAX's."""

import jax
import jax.numpy as jnp


def tree_map(f, items):
    return [f(item) for item in items]


def tree_leaves(tree):
    return list(tree.values())


def apply(fn, tree_reduce, xs):
    return tree_reduce(lambda a, b: a + b, tree_map(fn, xs))


def run(x):
    mapped = apply(jnp.sum, lambda f, xs: f(xs[0], xs[1]), [x, x * 2])
    return mapped + sum(tree_leaves({"a": x[0]})) + jax.numpy.sum(x)
