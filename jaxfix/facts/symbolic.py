"""Symbolic shapes and exact dtypes of fresh buffers and of the rows a loop writes into them, on `ast`.

A loop that fills a fresh buffer row by row (`out = jnp.zeros((n, d))`, then `out = out.at[i].set(v)` for each
`i < n`) computes what a stacking transform (lax.scan, jax.vmap) computes only when the loop runs exactly as many
steps as the buffer has rows and each `v` has a row's shape and dtype (`.at[i].set` broadcasts and casts, stacking
does not). JF104 (fori_loop to scan, `facts.row_writes`) proves both here.

A shape is a tuple of parts: ("const", 3), ("dim", key, k) for `x.shape[k]`, ("name", key) for an integer
variable, and ("spread", key, k) for the dimensions `x.shape[k:]`. A key names one value of a variable: the set
of its bindings that reach the place it is read (so `n` read twice with no assignment in between is one key), or
("free", name) for a name the enclosing function does not bind. A dtype is a token: ("default", "float") for the
default dtype of a kind, ("dtype", "float32"), or ("dtype-of", key) for `x.dtype`. The answers were those of
LibCST's `analysis.shapes.SymbolicShapes`, deleted once JF301 (which reads this through facts/batches.py) moved.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxfix.facts.flow import UNDEFINED, Parameter, block_of, statement_of
from jaxfix.facts.knowledge.jax import ELEMENTWISE, FILLED_DTYPE_POSITION, FLOAT_PRESERVING, LIKE_DTYPE_POSITION

SymbolicShape = tuple
DtypeToken = tuple
_DEFAULT_DTYPES = {"float": "float", "int": "int", "bool": "bool", "complex": "complex"}
KINDS = ("bool", "int", "float", "complex")  # in the order JAX promotes across them


@dataclass
class FreshBuffer:
    """A fresh array `jnp.zeros((n, d))` (or `*_like`, `full`), where it is built and what rows it has."""

    call: ast.Call
    statement: ast.stmt  # where it is evaluated (the first statement of its line, or a compound statement)
    parts: SymbolicShape | None  # its whole shape
    leading: tuple | None  # its leading dimension
    row: SymbolicShape | None  # the shape of one row
    dtype: DtypeToken | None
    # How its dtype is spelled: ("code", dtype expression), ("dtype-of", name, key) for `*_like(name)`,
    # ("kind", "float") for a default dtype; None where it cannot be said.
    spelling: tuple | None
    binding: ast.stmt | None = None  # the `out = jnp.zeros(...)` line it comes from, when it is one


class SymbolicShapes:
    """Shapes and exact dtypes as tokens that two places of one function can compare (see above). `facts`: the
    file's FileFacts (binder, lines, flow, shapes.constant, code)."""

    def __init__(self, facts) -> None:
        self._facts = facts
        self._binder = facts.binder

    # ---- values of names -----------------------------------------------------------------------------------

    def key(self, name: str, where: ast.stmt):
        """Which value of `name` the statement `where` reads: the set of its bindings that reach there."""
        flow = self._flow_at(where)
        if name not in flow.locals:
            return ("free", name)
        sources = flow.reaching(where, name)
        if not sources or UNDEFINED in sources:
            return None
        return frozenset(id(s.node) if isinstance(s, Parameter) else id(s) for s in sources)

    def single_value(self, name: str, where: ast.stmt) -> ast.expr | None:
        """The value of the one `name = value` that reaches the statement `where`, if there is exactly one."""
        sources = self._flow_at(where).reaching(where, name)
        if len(sources) != 1:
            return None
        (source,) = sources
        return source if isinstance(source, ast.expr) else None

    def statement(self, node: ast.AST) -> ast.stmt | None:
        """The statement holding `node` as LibCST holds statements (`flow.statement_of`)."""
        return statement_of(node, self._binder.parents, self._facts.lines)

    def unit(self, statement: ast.stmt) -> tuple[str, list[ast.stmt]]:
        """The LibCST statement `statement` starts, as `flow.Lines.group` gives it: ("line" | "suite" |
        "compound", its statements)."""
        parent = self._binder.parents.get(statement)
        block = block_of(statement, parent) if parent is not None else None
        for kind, group in self._facts.lines.group(block or [statement]):
            if group[0] is statement:
                return kind, group
        return "suite", [statement]

    def single_assign(self, statement: ast.stmt | None) -> ast.Assign | None:
        """The `a = b` of a line holding that one assignment (LibCST's SimpleStatementLine of one Assign)."""
        if statement is None or type(statement) is not ast.Assign:
            return None
        kind, group = self.unit(statement)
        return statement if kind == "line" and len(group) == 1 else None

    def _flow_at(self, where: ast.stmt):
        return self._facts.flow(self._facts.enclosing_function(where))

    def _constant(self, expr: ast.expr) -> int | None:
        return self._facts.shapes.constant(expr)

    # ---- fresh buffers -------------------------------------------------------------------------------------

    def fresh(self, expr: ast.expr, where: ast.stmt, depth: int = 0, integer=None) -> FreshBuffer | str:
        """`expr` as a fresh array (`jnp.zeros((n, d))`, or a name bound to one), or what it is instead (the code
        to show). `integer`: a ("name", key) dimension known to hold an integer (a loop's bound)."""
        shown = f"`{snippet(self._facts.purity.code(expr))}`"
        if type(expr) is ast.Name and depth < 3:
            value = self.single_value(expr.id, where)
            if value is None:
                return shown
            found = self.fresh(value, self.statement(value), depth + 1, integer)
            if isinstance(found, FreshBuffer) and found.binding is None:
                binding = self.statement(value)
                assign = self.single_assign(binding)
                if assign is not None and len(assign.targets) == 1 and type(assign.targets[0]) is ast.Name:
                    found.binding = binding
            return found
        if type(expr) is not ast.Call or _starred(expr):
            return shown
        callee = self._binder.callee(expr)
        positional = list(expr.args)
        keywords = {k.arg: k.value for k in expr.keywords}
        if callee in FILLED_DTYPE_POSITION:
            names = ["shape", "fill_value", "dtype"] if callee.endswith("full") else ["shape", "dtype"]
        elif callee in LIKE_DTYPE_POSITION:
            names = ["a", "fill_value", "dtype"] if callee.endswith("full_like") else ["a", "dtype"]
        else:
            return shown
        if len(positional) > len(names) or set(keywords) - set(names[len(positional):]):
            return shown
        given = dict(zip(names, positional)) | keywords
        if callee in FILLED_DTYPE_POSITION:
            parts = self.shape_parts(given["shape"], where, integer=integer) if "shape" in given else None
        else:
            array = given.get("a")
            key = self.key(array.id, where) if type(array) is ast.Name else None
            parts = (("spread", key, 0),) if key is not None else None
        leading, row = split_leading(parts)
        dtype, spelling = self._buffer_dtype(given, callee, where)
        return FreshBuffer(expr, where, parts, leading, row, dtype, spelling)

    def _buffer_dtype(self, given: dict, callee: str, where) -> tuple[DtypeToken | None, tuple | None]:
        dtype = given.get("dtype")
        if dtype is not None and not (type(dtype) is ast.Constant and dtype.value is None):
            return self.dtype_token(dtype, where), ("code", dtype)
        if callee in LIKE_DTYPE_POSITION:
            array = given.get("a")
            if type(array) is ast.Name:
                key = self.key(array.id, where)
                return (("dtype-of", key) if key is not None else None), ("dtype-of", array, key)
            return None, None
        if callee.endswith("full"):
            fill = given.get("fill_value")
            kind = literal_kind(fill) if fill is not None else None
            if kind is None and fill is not None and self._binder.qualified(fill) in ("jax.numpy.nan", "jax.numpy.inf"):
                kind = "float"
            return (("default", kind), ("kind", kind)) if kind else (None, None)
        return ("default", "float"), ("kind", "float")

    def dtype_token(self, dtype: ast.expr, where) -> DtypeToken | None:
        """A dtype expression (`jnp.float32`, `"int32"`, `float`, `x.dtype`) as a token."""
        if type(dtype) is ast.Constant and type(dtype.value) is str:
            return ("dtype", dtype.value)
        binder = self._binder
        if type(dtype) is ast.Name and dtype.id in _DEFAULT_DTYPES and binder.is_builtin(dtype, dtype.id):
            return ("default", _DEFAULT_DTYPES[dtype.id])
        qualified = binder.qualified(dtype)
        if qualified is not None and qualified.startswith(("jax.numpy.", "numpy.")):
            return ("dtype", qualified.rsplit(".", 1)[-1])
        if type(dtype) is ast.Attribute and dtype.attr == "dtype" and type(dtype.value) is ast.Name:
            key = self.key(dtype.value.id, where)
            return ("dtype-of", key) if key is not None else None
        return None

    # ---- shapes --------------------------------------------------------------------------------------------

    def shape_parts(self, shape: ast.expr, where, depth: int = 0, integer=None) -> SymbolicShape | None:
        """A shape argument (`(n, d)`, `x.shape`, `x.shape[1:] + (3,)`, a name bound to one) as parts."""
        if type(shape) in (ast.Tuple, ast.List):
            parts: list = []
            for element in shape.elts:
                if type(element) is ast.Starred:
                    spread = self.spread(element.value, where)
                    if spread is None:
                        return None
                    parts.append(spread)
                else:
                    dim = self.dim(element, where)
                    if dim is None:
                        return None
                    parts.append(dim)
            return tuple(parts)
        if type(shape) is ast.BinOp and type(shape.op) is ast.Add and tuple_like(shape):
            left = self.shape_parts(shape.left, where, depth, integer)
            right = self.shape_parts(shape.right, where, depth, integer)
            return None if left is None or right is None else left + right
        spread = self.spread(shape, where)
        if spread is not None:
            return (spread,)
        if type(shape) is ast.Name and depth < 3:
            value = self.single_value(shape.id, where)
            if value is not None and tuple_like(value):
                return self.shape_parts(value, self.statement(value), depth + 1, integer)
        dim = self.dim(shape, where)
        if dim is not None and dim[0] == "name" and type(shape) is ast.Name and dim != integer:
            return None  # a name may hold a tuple as well as a number
        return (dim,) if dim is not None else None

    def spread(self, expr: ast.expr, where) -> tuple | None:
        """`x.shape` → ("spread", x, 0); `x.shape[k:]` → ("spread", x, k)."""
        start = 0
        if type(expr) is ast.Subscript and type(expr.slice) is ast.Slice:
            piece = expr.slice
            if piece.upper is not None or piece.step is not None:
                return None
            start = 0 if piece.lower is None else self._constant(piece.lower)
            if start is None or start < 0:
                return None
            expr = expr.value
        if type(expr) is ast.Attribute and expr.attr == "shape" and type(expr.value) is ast.Name:
            key = self.key(expr.value.id, where)
            return ("spread", key, start) if key is not None else None
        return None

    def dim(self, expr: ast.expr, where, depth: int = 0) -> tuple | None:
        """One dimension (an integer) as a token that two places can compare."""
        constant = self._constant(expr)
        if constant is not None:
            return ("const", constant)
        if type(expr) is ast.Subscript and type(expr.slice) not in (ast.Slice, ast.Tuple):
            base = expr.value
            if type(base) is ast.Attribute and base.attr == "shape" and type(base.value) is ast.Name:
                k = self._constant(expr.slice)
                key = self.key(base.value.id, where)
                return ("dim", key, k) if k is not None and k >= 0 and key is not None else None
            return None
        if type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id == "len":
            args = expr.args
            if len(args) == 1 and not expr.keywords and type(args[0]) is ast.Name:
                if self._binder.is_builtin(expr.func, "len"):
                    key = self.key(args[0].id, where)
                    return ("dim", key, 0) if key is not None else None
            return None
        if type(expr) is ast.Name:
            value = self.single_value(expr.id, where) if depth < 3 else None
            if value is not None:
                found = self.dim(value, self.statement(value), depth + 1)
                if found is not None:
                    return found
            key = self.key(expr.id, where)
            return ("name", key) if key is not None else None
        return None

    def leading_dims(self, name: str, where) -> list:
        """Dimension tokens equal to the number of rows of the array `name` holds at `where`: `name.shape[0]`,
        and `n` where it is `jax.random.split(key, n)`."""
        key = self.key(name, where)
        found = [("dim", key, 0)] if key is not None else []
        value = self.single_value(name, where)
        if type(value) is ast.Call and self._binder.callee(value) == "jax.random.split":
            if len(value.args) == 2 and not value.keywords and not _starred(value):
                dim = self.dim(value.args[1], self.statement(value))
                if dim is not None:
                    found.append(dim)
        return found

    # ---- what a row value is -------------------------------------------------------------------------------

    def elementwise_facts(self, expr: ast.expr, facts_of, astype_dtype) -> tuple[list, list] | None:
        """The shapes and dtypes an elementwise expression (arithmetic, `x.astype(d)`, `jnp.tanh(x)`, ...) is
        proven to have, from those of its operands (`facts_of(operand)` → (shapes, dtypes)); `astype_dtype(d)`
        is the token of the dtype argument of `astype`. None when `expr` is none of these."""
        kind = type(expr)
        if kind is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "astype":
            shapes, _ = facts_of(expr.func.value)
            dtype = None
            if len(expr.args) == 1 and not expr.keywords and type(expr.args[0]) is not ast.Starred:
                dtype = astype_dtype(expr.args[0])
            return shapes, ([dtype] if dtype is not None else [])
        operands = None
        keeps_dtype: bool | None = True  # None: for float operands only
        if kind is ast.BinOp and type(expr.op) is not ast.MatMult:
            operands = [expr.left, expr.right]
            keeps_dtype = None if type(expr.op) is ast.Div else True
        elif kind is ast.UnaryOp and type(expr.op) is not ast.Not:
            operands = [expr.operand]
        elif kind is ast.Call and self._binder.callee(expr) in ELEMENTWISE:
            if not expr.keywords and not _starred(expr):
                operands = list(expr.args)
                # Only these keep a float dtype (tanh of an int array is float, isnan is bool, abs of complex
                # is float, float16(x) is float16).
                keeps_dtype = None if self._binder.callee(expr) in FLOAT_PRESERVING else False
        if operands is None:
            return None
        facts = [facts_of(operand) for operand in operands]
        shaped = [shapes for shapes in (f[0] for f in facts) if () not in shapes]
        if any(not shapes for shapes, _ in facts):
            shapes_out: list = []
        elif not shaped:
            shapes_out = [()]
        else:
            shapes_out = [s for s in shaped[0] if all(s in other for other in shaped[1:])]
        # The dtype: that of the array operands, when they share one and the Python numbers among them (weakly
        # typed) are of a kind that kind keeps (2.0 * a float32 array is float32; 2.0 * an int array is not).
        arrays = [(o, f) for o, f in zip(operands, facts) if not is_number(o)]
        numbers = [literal_kind(o) for o in operands if is_number(o)]
        dtypes_out: list = []
        if arrays and all(d for _, (_, d) in arrays):
            common = [d for d in arrays[0][1][1] if all(d in other for _, (_, other) in arrays[1:])]
            for dtype in common:
                kind_of = token_kind(dtype)
                if kind_of is None and (numbers or keeps_dtype is not True):
                    continue
                if numbers and not all(n is not None and KINDS.index(n) <= KINDS.index(kind_of) for n in numbers):
                    continue
                if keeps_dtype is False:
                    continue
                if keeps_dtype is None and kind_of != "float":
                    continue  # a division or an inexact function of an integer array is a float array
                dtypes_out.append(dtype)
        return shapes_out, dtypes_out


def _starred(call: ast.Call) -> bool:
    """`*a` or `**k` among a call's arguments."""
    return any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords)


def tuple_like(expr: ast.expr) -> bool:
    """A shape tuple written out, `x.shape`, `x.shape[k:]`, or a sum of those."""
    if type(expr) in (ast.Tuple, ast.List):
        return True
    if type(expr) is ast.BinOp and type(expr.op) is ast.Add:
        return tuple_like(expr.left) or tuple_like(expr.right)
    if type(expr) is ast.Subscript and type(expr.slice) is ast.Slice:
        expr = expr.value
    return type(expr) is ast.Attribute and expr.attr == "shape"


def split_leading(parts: SymbolicShape | None) -> tuple[tuple | None, SymbolicShape | None]:
    """The leading dimension of a shape and the shape of one row."""
    if not parts:
        return None, None
    first = parts[0]
    if first[0] == "spread":
        return ("dim", first[1], first[2]), (("spread", first[1], first[2] + 1), *parts[1:])
    return first, tuple(parts[1:])


def same_shape(row: SymbolicShape, value: SymbolicShape) -> bool:
    """Whether a value of shape `value` written with `.at[i].set` fills the row exactly (no broadcasting),
    whenever the original runs: equal shapes, any value into a scalar row (only scalars broadcast to `()`),
    or a value with all of `x.shape[k:]` into a row written as `x.shape[k], x.shape[k + 1], ...` (a value of
    another rank makes the original raise: too many dimensions to broadcast, or `x.shape[j]` out of range)."""
    if row == () or row == value:
        return True
    if value and value[-1][0] == "spread":
        _, key, start = value[-1]
        prefix = value[:-1]
        rest = row[len(prefix) :]
        if tuple(row[: len(prefix)]) == tuple(prefix) and rest:
            return all(part == ("dim", key, start + offset) for offset, part in enumerate(rest))
    return False


def token_kind(token: DtypeToken) -> str | None:
    """bool, int, float or complex: the kind of dtype a token names, where it says."""
    if token[0] == "default":
        return token[1]
    if token[0] == "dtype":
        name = str(token[1])
        for kind, prefixes in (("bool", ("bool",)), ("int", ("int", "uint")), ("float", ("float", "bfloat")),
                               ("complex", ("complex",))):  # fmt: skip
            if name.startswith(prefixes):
                return kind
    return None


def literal_kind(expr: ast.expr) -> str | None:
    """The kind of a Python number literal (`-2.0` → float), None for anything else."""
    if type(expr) is ast.UnaryOp and type(expr.op) in (ast.USub, ast.UAdd):
        expr = expr.operand
    if type(expr) is not ast.Constant:
        return None
    value = expr.value
    if type(value) is bool:
        return "bool"
    return {float: "float", int: "int", complex: "complex"}.get(type(value))


def is_number(expr: ast.expr) -> bool:
    """A Python number literal (`3`, `-0.5`, `True`), as LibCST's `syntax.is_number`: `-True` is none."""
    if type(expr) is ast.UnaryOp and type(expr.op) in (ast.USub, ast.UAdd):
        return type(expr.operand) is ast.Constant and type(expr.operand.value) in (int, float)
    return type(expr) is ast.Constant and type(expr.value) in (int, float, bool)


def snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
