"""Ranks, dtype categories and integer constants of expressions, on `ast`, from cheap local evidence.

`lax.fori_loop`, `lax.scan`, `lax.while_loop` and `lax.cond` need every carried value (every branch's output) to
keep one shape and dtype; a Python loop or `if` does not. Before a rule rewrites, it asks here whether a value keeps
its rank (`rank`), whether an update changes its shape (`reshaping`), and whether it changes its dtype category
(`category`: an int array times 0.5 becomes float, which lax rejects at trace time). Every answer is proven from the
code or None ("unknown"): callers decide what unknown means for them.

A name's rank or category is what every one of its bindings in the scope that answers it proves alike: a
parameter's annotation (jaxtyping's `Float[Array, "n d"]`, `float`), a static parameter (a Python number), the
index of a `for i in range(...)`, or the value of a plain `name = value`. What JAX does (which calls keep a rank,
which promote to float) is data in `knowledge/jax.py`."""

from __future__ import annotations

import ast
import enum
from typing import Callable

from jaxfix.facts.binder import Binder, Binding
from jaxfix.facts.knowledge.jax import (
    AT_METHODS, BOOL_RESULT, DTYPE_POSITION, ELEMENTWISE, FILLED, FLOAT_BY_DEFAULT, INEXACT_RESULT, INT_RESULT,
    KIND_KEEPING, LIKE, MATMULS, RANDOM_FLOAT, RANK_ONE, REDUCTIONS, RESHAPING,
)
from jaxfix.facts.knowledge.jaxtyping import DTYPE_WRAPPERS, WRAPPER_KINDS
from jaxfix.facts.literals import int_constant, is_number
from jaxfix.facts.positions import Positions
from jaxfix.facts.spelling import spelled_names
from jaxfix.facts.traced import Kind, Traced

_JNP = "jax.numpy."
RESHAPING_METHODS = frozenset({"reshape", "ravel", "flatten", "squeeze", "repeat", "T", "transpose", "swapaxes"})
REDUCTION_METHODS = frozenset("sum mean max min prod std var all any argmax argmin ptp".split())
_DEPTH = 12  # how deep a chain of names and operands is followed before "unknown"


class Category(enum.IntEnum):
    """A dtype's kind, ordered as JAX promotes across kinds (bool < int < float < complex)."""

    BOOL = 0
    INT = 1
    FLOAT = 2
    COMPLEX = 3


DTYPE_NAMES = {
    **{name: Category.BOOL for name in ("bool", "bool_")},
    **{name: Category.INT for name in "int int8 int16 int32 int64 uint8 uint16 uint32 uint64".split()},
    **{name: Category.FLOAT for name in "float float16 float32 float64 bfloat16".split()},
    **{name: Category.COMPLEX for name in "complex complex64 complex128".split()},
}
_JAXTYPING_CATEGORY = {wrapper: Category[kind.upper()] for wrapper, kind in WRAPPER_KINDS.items()}
_BUILTIN_CATEGORY = {"float": Category.FLOAT, "int": Category.INT, "bool": Category.BOOL, "len": Category.INT}


class Shapes:
    """The rank, category and constant facts of one module; names resolve through the binder."""

    def __init__(self, binder: Binder, traced: Traced, positions: Positions) -> None:
        self.binder = binder
        self.traced = traced
        self.positions = positions

    # ---- integer constants ---------------------------------------------------------------------------------

    def constant(self, expr: ast.expr) -> int | None:
        """The value of an integer expression made of literals and module constants, or None."""
        return int_constant(self.binder, expr)

    def _bindings(self, name: ast.Name) -> list[Binding]:
        scope = self.binder.scope_of.get(name)
        return scope.resolve(name.id) if scope is not None else []

    def _plain_assignment(self, binding: Binding) -> ast.Assign | None:
        """The `name = value` statement of a binding, when it is one (not `a, b = ...`, not a parameter)."""
        target = binding.node
        if type(target) is not ast.Name:
            return None
        assign = self.binder.parent(target)
        if type(assign) is ast.Assign and len(assign.targets) == 1 and assign.targets[0] is target:
            return assign
        return None

    def _range_index(self, binding: Binding) -> bool:
        """Whether a binding is the target of `for i in range(...)` (or `reversed(range(...))`): a Python int."""
        target = binding.node
        loop = self.binder.parent(target) if type(target) is ast.Name else None
        if type(loop) is not ast.For or loop.target is not target:
            return False
        it = loop.iter
        if _is_call_of_name(it, "reversed") and len(it.args) == 1 and not it.keywords:
            if not self.binder.is_builtin(it.func, "reversed"):
                return False
            it = it.args[0]
        return (
            _is_call_of_name(it, "range")
            and self.binder.is_builtin(it.func, "range")
            and not it.keywords
            and not any(type(a) is ast.Starred for a in it.args)
        )

    # ---- shape changes -------------------------------------------------------------------------------------

    def reshaping(self, value: ast.expr, name: str) -> str | None:
        """An operation that gives the new value of the carried `name` a shape other than its old one
        (`jnp.concatenate([x, y])`, `x[1:]`, `x.reshape(...)`, `x + [y]`), as text for a message. Only the
        operations whose result becomes the value count: `x.at[1:].set(x[:-1])` keeps the shape of `x`."""
        for node in self.spine(value):
            kind = _kind(node)
            if kind is ast.Call:
                callee = self.binder.callee(node)
                if callee in RESHAPING and any(_mentions(arg, name) for arg in _arguments(node)):
                    return self.positions.callee(node)
                func = node.func
                if type(func) is ast.Attribute and func.attr in RESHAPING_METHODS and _mentions(func.value, name):
                    return f".{func.attr}()"
            elif kind is ast.Attribute and node.attr in ("T", "mT") and _mentions(node.value, name):
                return f".{node.attr}"
            elif kind is ast.Subscript and type(node.value) is ast.Name and node.value.id == name:
                if not all(_is_full_slice(element) for element in _elements(node)):
                    return f"{name}[...]"
            elif kind is ast.BinOp and type(node.op) in (ast.Add, ast.Mult):
                sides = (node.left, node.right)
                if any(type(s) in (ast.List, ast.Tuple) for s in sides) and _mentions(node, name):
                    return "a list or tuple that grows"
        return None

    def spine(self, expr: ast.expr):
        """`expr` and the sub-expressions whose shape it keeps or broadcasts (operands of arithmetic and of
        elementwise functions, the base of `.at[...]` updates and of `.astype`, both arms of `a if c else b`)."""
        yield expr
        kind = _kind(expr)
        if kind is ast.BinOp and type(expr.op) is not ast.MatMult:
            yield from self.spine(expr.left)
            yield from self.spine(expr.right)
        elif kind is ast.UnaryOp:
            yield from self.spine(expr.operand)
        elif kind is ast.IfExp:
            yield from self.spine(expr.body)
            yield from self.spine(expr.orelse)
        elif kind is ast.Call:
            if self.binder.callee(expr) in ELEMENTWISE:
                for arg in _arguments(expr):
                    yield from self.spine(arg)
            elif type(expr.func) is ast.Attribute:
                receiver, method = expr.func.value, expr.func.attr
                if method in AT_METHODS:
                    at = _at_of(receiver)
                    if at is not None:
                        yield from self.spine(at)
                elif method == "astype":
                    yield from self.spine(receiver)

    # ---- ranks ---------------------------------------------------------------------------------------------

    def rank(self, expr: ast.expr, env: dict[str, int | None] | None = None, depth: int = 0) -> int | None:
        """The number of dimensions `expr` has, when cheap evidence proves it; None when unknown. `env` gives
        the ranks of names (the carried values of a loop) that the code alone cannot."""
        env = env or {}
        if depth > _DEPTH:
            return None
        rank = lambda e: self.rank(e, env, depth + 1)  # noqa: E731
        if is_number(expr):
            return 0
        kind = _kind(expr)
        if kind is ast.Name:
            if expr.id in env:
                return env[expr.id]
            return self._name_rank(expr, depth)
        if kind is ast.UnaryOp:
            return rank(expr.operand)
        if kind is ast.BinOp:
            left, right = rank(expr.left), rank(expr.right)
            if left is None or right is None:
                return None
            if type(expr.op) is ast.MatMult:
                return _matmul_rank(left, right)
            return max(left, right)
        if kind is ast.Compare:
            parts = [rank(expr.left), *(rank(c) for c in expr.comparators)]
            return None if None in parts else max(parts)
        if kind is ast.IfExp:
            body, orelse = rank(expr.body), rank(expr.orelse)
            return body if body == orelse else None
        if kind is ast.Attribute:
            if expr.attr in ("ndim", "size"):
                return 0
            if expr.attr in ("real", "imag"):
                return rank(expr.value)
            return None
        if kind is ast.Subscript:
            base = expr.value
            elements = _elements(expr)
            if type(base) is ast.Attribute and base.attr == "shape":
                return 0 if not any(type(e) is ast.Slice for e in elements) else None
            base_rank = rank(base)
            if base_rank is None:
                return None
            result = base_rank
            for element in elements:
                if type(element) is ast.Slice:
                    continue
                if type(element) is ast.Constant and (element.value is None or element.value is Ellipsis):
                    return None
                if rank(element) != 0:
                    return None
                result -= 1
            return result if result >= 0 else None
        if kind is ast.Call:
            return self._call_rank(expr, env, depth)
        return None

    def least_rank(self, expr: ast.expr) -> int | None:
        """A rank `expr` is known to reach at least, where its exact one is unknown: broadcasting never lowers
        a rank, so `grid > t` has at least the rank of `grid`. None when nothing is known."""
        exact = self.rank(expr)
        if exact is not None:
            return exact
        kind = _kind(expr)
        if kind is ast.BinOp and type(expr.op) is not ast.MatMult:
            parts = [expr.left, expr.right]
        elif kind is ast.Compare:
            parts = [expr.left, *expr.comparators]
        elif kind is ast.UnaryOp:
            parts = [expr.operand]
        else:
            return None
        known = [r for r in (self.least_rank(p) for p in parts) if r is not None]
        return max(known) if known else None

    def _call_rank(self, call: ast.Call, env, depth: int) -> int | None:  # noqa: C901 - one branch per kind of call
        rank = lambda e: self.rank(e, env, depth + 1)  # noqa: E731
        if _starred(call):
            return None
        positional = call.args
        keywords = {k.arg: k.value for k in call.keywords}
        func = call.func
        callee = self.binder.callee(call)
        if callee is None and type(func) is ast.Name and self.binder.is_builtin(func, func.id):
            if func.id in ("len", "int", "float"):
                return 0
            if func.id == "abs" and positional:
                return rank(positional[0])
            return None
        if callee is None and type(func) is ast.Attribute:
            method = func.attr
            if method in REDUCTION_METHODS and not positional and not keywords:
                return 0
            if method == "astype":
                return rank(func.value)
            if method in AT_METHODS:
                at = _at_of(func.value)
                if at is not None:
                    return rank(at)
            return None
        if callee is None:
            return None
        if callee in REDUCTIONS:
            if "axis" in keywords or "axes" in keywords or len(positional) > (2 if callee.endswith("vdot") else 1):
                return None
            return 0
        if callee in MATMULS and len(positional) == 2:
            left, right = rank(positional[0]), rank(positional[1])
            return None if left is None or right is None else _matmul_rank(left, right)
        if callee in ELEMENTWISE:
            if callee.rsplit(".", 1)[-1] in ("asarray", "array") and ("dtype" not in keywords and len(positional) > 1):
                return None
            ranks = [rank(p) for p in positional[: 3 if callee.endswith("where") else None]]
            if callee.endswith("clip"):
                ranks += [rank(v) for k, v in keywords.items() if k in ("min", "max", "a_min", "a_max")]
            return None if not ranks or None in ranks else max(ranks)
        if callee in LIKE and positional:
            return rank(positional[0]) if "shape" not in keywords else None
        if callee in FILLED and (positional or "shape" in keywords):
            return shape_rank(positional[0] if positional else keywords["shape"])
        if callee in RANK_ONE:
            return 1 if "axis" not in keywords else None
        if callee == "jax.numpy.reshape" and len(positional) == 2:
            return shape_rank(positional[1])
        return None

    def _name_rank(self, name: ast.Name, depth: int) -> int | None:
        """A name's rank: the same for each of its bindings in the function, where each one proves it."""

        def of_param(arg: ast.arg, binding: Binding) -> int | None:
            if self.traced.kind(name) is Kind.STATIC and binding.scope.kind != "module":
                return 0  # a static (hashable) argument used with arrays: a Python number
            if _number_annotation(arg):
                return 0  # `gamma: float`: a Python number, or a 0-d array once jit traces it
            return annotation_rank(arg)

        return self._per_binding(name, of_param, lambda value: self.rank(value, {}, depth + 1))

    def _per_binding(self, name: ast.Name, of_param: Callable, of_value: Callable):
        """What every binding of `name` says alike (`of_param` for a parameter, `of_value` for the value of
        `name = value`), or None when a binding is of another form or two disagree."""
        found = set()
        for binding in self._bindings(name):
            if type(binding.node) is ast.arg:
                found.add(of_param(binding.node, binding))
                continue
            if self._range_index(binding):
                found.add(of_value(_ZERO))  # a Python int, like any literal int
                continue
            assign = self._plain_assignment(binding)
            if assign is None:
                return None
            found.add(of_value(assign.value))
        return found.pop() if len(found) == 1 else None

    # ---- dtype categories ----------------------------------------------------------------------------------

    def category(self, expr: ast.expr, env: dict[str, Category | None] | None = None, depth: int = 0) -> Category | None:
        """The dtype category of `expr` (bool, int, float, complex) when the code proves it, else None.
        A Python number counts with its own category: JAX's weak typing keeps an array's category when a
        Python number of a lower one meets it, and promotes to the higher category otherwise, so the
        maximum of the operands' categories is the result's either way."""
        env = env or {}
        if depth > _DEPTH:
            return None
        category = lambda e: self.category(e, env, depth + 1)  # noqa: E731
        kind = _kind(expr)
        if kind is ast.Constant:
            return _CONSTANT_CATEGORY.get(type(expr.value))
        if kind is ast.Name:
            if expr.id in env:
                return env[expr.id]
            return self._name_category(expr, depth)
        if kind is ast.UnaryOp:
            if type(expr.op) is ast.Not:
                return None  # `not x` on an array raises; on a Python value it is a bool
            inner = category(expr.operand)
            if type(expr.op) is ast.USub and inner is Category.BOOL:
                return None  # negating a bool array raises
            return inner
        if kind is ast.BinOp:
            left, right = category(expr.left), category(expr.right)
            if left is None or right is None:
                return None
            joined = max(left, right)
            if type(expr.op) is ast.Div:
                return max(joined, Category.FLOAT)
            if joined is Category.BOOL:
                return None  # Python bools add up to ints, bool arrays do not: it depends on which they are
            return joined
        if kind is ast.Compare:
            return Category.BOOL
        if kind is ast.IfExp:
            body, orelse = category(expr.body), category(expr.orelse)
            return None if body is None or orelse is None else max(body, orelse)
        if kind is ast.Subscript:
            base = expr.value
            if type(base) is ast.Attribute and base.attr == "shape":
                return Category.INT
            return category(base)
        if kind is ast.Attribute:
            if expr.attr in ("ndim", "size"):
                return Category.INT
            if expr.attr in ("T", "mT"):
                return category(expr.value)
            return None
        if kind is ast.Call:
            return self._call_category(expr, env, depth)
        return None

    def least_category(self, expr: ast.expr, env: dict[str, Category | None] | None = None) -> Category | None:
        """A category `expr` is known to reach at least, where its exact one is unknown: `x * 0.5` is at least
        float whatever `x` is, since promotion never lowers a category. None when nothing is known."""
        env = env or {}
        exact = self.category(expr, env)
        if exact is not None:
            return exact
        least = lambda e: self.least_category(e, env)  # noqa: E731
        kind = _kind(expr)
        if kind is ast.BinOp:
            known = [c for c in (least(expr.left), least(expr.right)) if c is not None]
            if type(expr.op) is ast.Div:
                known.append(Category.FLOAT)
            return max(known) if known else None
        if kind is ast.UnaryOp and type(expr.op) is not ast.Not:
            return least(expr.operand)
        if kind is ast.IfExp:
            body, orelse = least(expr.body), least(expr.orelse)
            return None if body is None or orelse is None else min(body, orelse)
        if kind is ast.Call and not call_has_keywords_or_stars(expr):
            callee = self.binder.callee(expr)
            known = [c for c in (least(a) for a in expr.args) if c is not None]
            if callee in INEXACT_RESULT:
                return max([*known, Category.FLOAT])
            if callee in KIND_KEEPING and callee.rsplit(".", 1)[-1] not in ("where", "sum", "prod", "clip"):
                return max(known) if known else None
        return None

    def different_categories(self, a: ast.expr, b: ast.expr) -> tuple[Category, Category] | None:
        """The categories of `a` and `b` when they provably differ (where one is unknown, its least category
        counts only if it exceeds the other's), else None: lax.cond and the carries of lax loops need one dtype."""
        category_a, category_b = self.category(a), self.category(b)
        if category_a is None and category_b is not None:
            least = self.least_category(a)
            category_a = least if least is not None and least > category_b else None
        elif category_b is None and category_a is not None:
            least = self.least_category(b)
            category_b = least if least is not None and least > category_a else None
        if category_a is not None and category_b is not None and category_a != category_b:
            return category_a, category_b
        return None

    def dtype_category(self, expr: ast.expr) -> Category | None:
        """The category a dtype expression names (`jnp.float32`, `float`, `"int32"`, `jnp.bool_`)."""
        if type(expr) is ast.Constant:
            return DTYPE_NAMES.get(expr.value) if type(expr.value) is str else None
        if type(expr) is ast.Name and self.binder.is_builtin(expr, expr.id):
            return DTYPE_NAMES.get(expr.id)
        qualified = self.binder.qualified(expr)
        if qualified is not None and (qualified.startswith(_JNP) or qualified.startswith("numpy.")):
            return DTYPE_NAMES.get(qualified.rsplit(".", 1)[-1])
        return None

    def _call_category(self, call: ast.Call, env, depth: int) -> Category | None:  # noqa: C901 - one branch per call
        category = lambda e: self.category(e, env, depth + 1)  # noqa: E731
        if _starred(call):
            return None
        positional = call.args
        keywords = {k.arg: k.value for k in call.keywords}
        func = call.func
        callee = self.binder.callee(call)
        if "dtype" in keywords:
            return self.dtype_category(keywords["dtype"])
        position = DTYPE_POSITION.get(callee)
        if position is not None and len(positional) > position:
            return self.dtype_category(positional[position])  # jnp.zeros((), jnp.int32)
        if callee is None and type(func) is ast.Name and self.binder.is_builtin(func, func.id):
            return _BUILTIN_CATEGORY.get(func.id)
        if callee is None and type(func) is ast.Attribute:
            method = func.attr
            if method == "astype" and positional:
                return self.dtype_category(positional[0])
            if method in AT_METHODS:
                at = _at_of(func.value)
                if at is not None:
                    return category(at)  # the update is cast to the array's dtype
            if method in ("sum", "prod", "cumsum", "cumprod"):
                inner = category(func.value)
                return None if inner is None else max(inner, Category.INT)
            if method in ("max", "min", "clip", "reshape", "ravel", "flatten", "squeeze", "transpose", "copy"):
                return category(func.value)
            if method in ("mean", "std", "var"):
                inner = category(func.value)
                return None if inner is None else max(inner, Category.FLOAT)
            return None
        if callee is None:
            return None
        short = callee.rsplit(".", 1)[-1]
        if callee.startswith(_JNP) and short in DTYPE_NAMES:  # jnp.float32(x)
            return DTYPE_NAMES[short]
        if callee in FLOAT_BY_DEFAULT:
            return Category.FLOAT
        if callee == _JNP + "full" and len(positional) >= 2:
            return category(positional[1])
        if callee in LIKE and positional:
            if callee == _JNP + "full_like" and len(positional) < 2:
                return None
            return category(positional[0])
        if callee == _JNP + "arange":
            parts = [category(p) for p in positional]
            return None if not parts or None in parts else max(*parts, Category.INT)
        if callee in RANDOM_FLOAT:
            return Category.FLOAT
        if callee == "jax.random.randint":
            return Category.INT
        if callee in BOOL_RESULT:
            return Category.BOOL
        if callee in INT_RESULT:
            return Category.INT
        arrays = positional[1:3] if short == "where" else positional[:1] if short in ("sum", "prod") else positional
        if short == "clip":
            arrays = positional[:1]
        parts = [category(p) for p in arrays]
        if not parts or None in parts:
            return None
        joined = max(parts)
        if callee in INEXACT_RESULT:
            return max(joined, Category.FLOAT)
        if callee in KIND_KEEPING:
            if short in ("sum", "prod", "cumsum", "cumprod") and joined is Category.BOOL:
                return Category.INT
            return joined
        return None

    def _name_category(self, name: ast.Name, depth: int) -> Category | None:
        """A name's category: the same for each of its bindings, where each one proves it."""
        return self._per_binding(
            name, lambda arg, _: annotation_category(arg), lambda value: self.category(value, {}, depth + 1)
        )


_ZERO = ast.Constant(0)
_CONSTANT_CATEGORY = {bool: Category.BOOL, int: Category.INT, float: Category.FLOAT, complex: Category.COMPLEX}


def _matmul_rank(left: int, right: int) -> int | None:
    if left == 0 or right == 0:
        return None
    if left == 1 and right == 1:
        return 0
    if left == 1:
        return right - 1
    if right == 1:
        return left - 1
    return max(left, right)


def shape_rank(shape: ast.expr) -> int | None:
    """The rank an array of this shape argument has (`(n, d)` → 2, `5` → 1, `x.shape[0]` → 1)."""
    kind = type(shape)
    if kind in (ast.Tuple, ast.List):
        if any(type(e) is ast.Starred for e in shape.elts):
            return None
        return len(shape.elts)
    if kind is ast.Constant and type(shape.value) is int:
        return 1
    if kind is ast.Subscript and type(shape.value) is ast.Attribute and shape.value.attr == "shape":
        if not any(type(e) is ast.Slice for e in _elements(shape)):
            return 1  # x.shape[0]: one dimension
    return None


def _jaxtyping(arg: ast.arg) -> tuple[str, str] | None:
    """(`Float`, `"n d"`) for a parameter annotated `Float[Array, "n d"]`."""
    annotation = arg.annotation
    if type(annotation) is not ast.Subscript:
        return None
    parts = _elements(annotation)
    if len(parts) != 2:
        return None
    head = annotation.value
    head_name = head.attr if type(head) is ast.Attribute else head.id if type(head) is ast.Name else None
    dims = parts[1]
    if head_name not in DTYPE_WRAPPERS or type(dims) is not ast.Constant or type(dims.value) is not str:
        return None
    return head_name, dims.value


def _number_annotation(arg: ast.arg) -> bool:
    """`x: float` or `x: int`: a scalar, whether a Python number or the 0-d array jit traces it as."""
    annotation = arg.annotation
    return type(annotation) is ast.Name and annotation.id in ("float", "int")


def annotation_rank(arg: ast.arg) -> int | None:
    """The rank a jaxtyping annotation gives (`Float[Array, "n d"]` → 2); None without one."""
    found = _jaxtyping(arg)
    if found is None:
        return None
    parts = found[1].split()
    if any(p.startswith("*") or "..." in p or p.startswith("#") for p in parts):
        return None
    return len(parts)


def annotation_category(arg: ast.arg) -> Category | None:
    """The category a parameter's annotation gives: jaxtyping's `Float[...]`, `Int[...]`; `float`, `int`."""
    found = _jaxtyping(arg)
    if found is not None:
        return _JAXTYPING_CATEGORY.get(found[0])
    annotation = arg.annotation
    if type(annotation) is ast.Name:
        return {"float": Category.FLOAT, "int": Category.INT, "bool": Category.BOOL}.get(annotation.id)
    return None


# ---- syntax ------------------------------------------------------------------------------------------------


def _kind(expr: ast.AST) -> type:
    """The node's class; `ast.BinOp` for the `x + v` a carry makes of `x += v` (a subclass of it)."""
    kind = type(expr)
    return ast.BinOp if kind is not ast.BinOp and isinstance(expr, ast.BinOp) else kind


def _elements(subscript: ast.Subscript) -> list[ast.expr]:
    """The index's elements as LibCST holds them: `x[i, j]` has two, `x[i]` one."""
    index = subscript.slice
    return list(index.elts) if type(index) is ast.Tuple and index.elts else [index]


def _is_full_slice(element: ast.expr) -> bool:
    """`:` alone."""
    return type(element) is ast.Slice and element.lower is None and element.upper is None and element.step is None


def _at_of(receiver: ast.expr) -> ast.expr | None:
    """`x` for the receiver `x.at[i]` of a functional update; None for anything else."""
    if type(receiver) is ast.Subscript and type(receiver.value) is ast.Attribute and receiver.value.attr == "at":
        return receiver.value.value
    return None


def _is_call_of_name(expr: ast.expr, name: str) -> bool:
    return type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id == name


def _starred(call: ast.Call) -> bool:
    """`f(*a)` or `f(**k)`: positions and keywords unknown."""
    return any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords)


def call_has_keywords_or_stars(call: ast.Call) -> bool:
    return bool(call.keywords) or any(type(a) is ast.Starred for a in call.args)


def _arguments(call: ast.Call) -> list[ast.expr]:
    """Every argument's value, as LibCST's `call.args` lists them (starred ones unwrapped, keywords' values)."""
    values = [a.value if type(a) is ast.Starred else a for a in call.args]
    return values + [k.value for k in call.keywords]


def _mentions(node: ast.AST, name: str) -> bool:
    """Whether `node` spells `name` anywhere, as LibCST's names go (attributes' and keywords' names too)."""
    return any(spelled == name for spelled in spelled_names(node))

