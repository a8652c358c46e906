"""Input specs from a function's annotations, read from the source (jaxtyping need not be installed).

    Float[Array, "b d"]      float32 JAX array; `b` and `d` get one size per example across all arguments
    Int[Array, ""]           int32 scalar array; Float32/Float64/BFloat16/Int8/UInt8/Bool/Complex/... likewise
    Float[np.ndarray, "n"]   a NumPy array
    Key[Array, ""]           a typed PRNG key
    "*batch d", "... d", "_" a named run of dimensions, an anonymous run, one anonymous dimension
    jax.Array, jnp.ndarray, np.ndarray, ArrayLike (no shape): float32, a few small shapes
    npt.NDArray[np.float64]  a NumPy array of that dtype, no shape
    float, int, bool         a bounded float, an int in -8..8, a bool
    Optional[X], X | None    as X
With `x64` (the module enables 64-bit mode), dtypes not spelled out (Float, Array, Int) are float64 and int64.
A parameter with a default and no annotation keeps its default. Anything else gives no spec.
"""

from __future__ import annotations

import ast
from typing import Any

from jaxfix.facts.knowledge.jaxtyping import WRAPPER_DTYPES as JAXTYPING_DTYPES
from jaxfix.facts.knowledge.tables import DRAWN_ARRAY_NAMES as JAX_ARRAYS, DRAWN_NUMPY_ROOTS
from jaxfix.facts.knowledge.tables import DRAWN_NUMPY_ARRAY_NAMES as NUMPY_ARRAYS, KEY_ANNOTATION_NAMES as KEY_TYPES

NUMPY_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint32", "bool_", "complex64", "complex128"}


def spec_for(annotation: ast.expr | None, *, x64: bool = False) -> dict[str, Any] | None:
    spec = _spec_for(annotation)
    if x64 and spec is not None and spec.get("default_dtype"):
        spec["dtype"] = {"float32": "float64", "int32": "int64", "uint32": "uint64", "complex64": "complex128"}.get(spec["dtype"], spec["dtype"])
    if spec is not None:
        spec.pop("default_dtype", None)
    return spec


def _spec_for(annotation: ast.expr | None) -> dict[str, Any] | None:
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # "Float[Array, 'n']"
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    optional = _strip_optional(annotation)
    if optional is not None:
        return _spec_for(optional)
    name = _last_name(annotation)
    if isinstance(annotation, ast.Subscript):
        base = _last_name(annotation.value)
        if base in JAXTYPING_DTYPES or base == "Key":
            return _jaxtyping(base, annotation.slice)
        if base == "NDArray":  # numpy.typing.NDArray[np.float32]
            dtype = _last_name(annotation.slice)
            return {"kind": "array", "dtype": _numpy_dtype(dtype), "shape": None, "numpy": True, "default_dtype": dtype not in NUMPY_DTYPES}
        return None
    if name in ("float",):
        return {"kind": "float"}
    if name == "int":
        return {"kind": "int"}
    if name == "bool":
        return {"kind": "bool"}
    if name in KEY_TYPES:
        return {"kind": "key", "shape": []}
    if name in NUMPY_ARRAYS and _root_name(annotation) in DRAWN_NUMPY_ROOTS:
        return {"kind": "array", "dtype": "float32", "shape": None, "numpy": True, "default_dtype": True}
    if name in JAX_ARRAYS or (name == "ndarray" and _root_name(annotation) in ("jnp",)):
        return {"kind": "array", "dtype": "float32", "shape": None, "numpy": False, "default_dtype": True}
    return None


def _jaxtyping(base: str, index: ast.expr) -> dict[str, Any] | None:
    if not isinstance(index, ast.Tuple) or len(index.elts) != 2:
        return None
    array_type, dims = index.elts
    if not (isinstance(dims, ast.Constant) and isinstance(dims.value, str)):
        return None
    shape = parse_dims(dims.value)
    if shape is None:
        return None
    if base == "Key":
        return {"kind": "key", "shape": shape}
    numpy = _last_name(array_type) in NUMPY_ARRAYS and _root_name(array_type) in ("np", "numpy", "ndarray")
    spelled = any(ch.isdigit() for ch in base)  # Float32, Int8: the dtype is spelled out
    return {"kind": "array", "dtype": JAXTYPING_DTYPES[base], "shape": shape, "numpy": numpy, "default_dtype": not spelled}


def parse_dims(text: str) -> list[Any] | None:
    """jaxtyping's dimension string as a shape spec: ints, names, "*name", "...", "_"; None for what is not
    supported (arithmetic on dimensions)."""
    shape: list[Any] = []
    for token in text.replace(",", " ").split():
        token = token.lstrip("#")  # broadcastable: treated as the plain dimension
        if token.isdigit():
            shape.append(int(token))
        elif token in ("...", "*_", "*..."):
            shape.append("...")
        elif token == "_":
            shape.append("_")
        elif token.startswith("*") and token[1:].isidentifier():
            shape.append(token)
        elif token.isidentifier():
            shape.append(token)
        elif "=" in token and token.split("=", 1)[0].isidentifier():  # "b=3": jaxtyping documents it as b
            shape.append(token.split("=", 1)[0])
        else:
            return None
    return shape


def _strip_optional(node: ast.expr) -> ast.expr | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [node.left, node.right]
        rest = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
        return rest[0] if len(rest) == 1 else None
    if isinstance(node, ast.Subscript) and _last_name(node.value) == "Optional":
        return node.slice
    return None


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _root_name(node: ast.AST) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _numpy_dtype(name: str) -> str:
    if name == "bool_":
        return "bool"
    return name if name in NUMPY_DTYPES else "float32"
