"""What jaxtyping's annotations mean, as data: `Float[Array, "n d"]` is an array of floats of shape (n, d)."""

from __future__ import annotations

ARRAY_ANNOTATIONS = frozenset({"jaxtyping.Array"})
MODULE = "jaxtyping."  # any subscript headed by one of its names (`jaxtyping.Float[...]`) annotates an array
# The dtype wrappers, by the last part of their name (`Float`, `jt.Float`), with the dtype an input drawn for one
# has (the verifier): the default width where none is spelled out.
WRAPPER_DTYPES: dict[str, str] = {
    "Float": "float32", "Float16": "float16", "Float32": "float32", "Float64": "float64", "BFloat16": "bfloat16",
    "Inexact": "float32", "Real": "float32", "Num": "float32", "Shaped": "float32",
    "Int": "int32", "Integer": "int32", "Int8": "int8", "Int16": "int16", "Int32": "int32", "Int64": "int64",
    "UInt": "uint32", "UInt8": "uint8", "UInt16": "uint16", "UInt32": "uint32", "UInt64": "uint64",
    "Bool": "bool", "Complex": "complex64", "Complex64": "complex64", "Complex128": "complex128",
}  # fmt: skip
# Those without a width (`Float`, not `Float32`): the ones the analysis reads a rank and a dtype kind from.
DTYPE_WRAPPERS = frozenset(name for name in WRAPPER_DTYPES if not any(c.isdigit() for c in name))
# The dtype kind each guarantees, where it is one kind (`Shaped`, `Num`, `Real` and `Inexact` admit several).
WRAPPER_KINDS: dict[str, str] = {
    "Float": "float", "Int": "int", "Integer": "int", "UInt": "int", "Bool": "bool", "Complex": "complex"
}  # fmt: skip
# Every wrapper the project index takes for an array, keys included.
ARRAY_WRAPPERS = DTYPE_WRAPPERS | {"Key", "PRNGKeyArray"}
