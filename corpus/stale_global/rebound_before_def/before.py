"""A setting chosen before the jitted function exists, or rebound after its definition but before any
call: the first trace already sees the final value."""

import os

import jax

precision = "default"
if os.environ.get("JAXFIX_CORPUS_HIGH_PRECISION"):
    precision = "highest"

width = 2


@jax.jit
def project(x, w):
    return jax.numpy.dot(x, w[:width], precision=precision)


width = 3


def run(x, w):
    return project(x, w)
