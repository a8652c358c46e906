"""What jaxtyping's annotations mean, as data: `Float[Array, "n d"]` is an array of floats of shape (n, d)."""

from __future__ import annotations

ARRAY_ANNOTATIONS = frozenset({"jaxtyping.Array"})
MODULE = "jaxtyping."  # any subscript headed by one of its names (`jaxtyping.Float[...]`) annotates an array
# The dtype wrappers, by the last part of their name (`Float`, `jt.Float`), that give a shape in their string.
DTYPE_WRAPPERS = frozenset({"Float", "Int", "Shaped", "Bool", "Real", "Inexact", "Num", "Integer", "Complex", "UInt"})
# Every wrapper whose subscript means an array, keys included.
ARRAY_WRAPPERS = DTYPE_WRAPPERS | {"Key", "PRNGKeyArray"}
