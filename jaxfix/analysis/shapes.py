"""Ranks, dtype categories and integer constants of expressions, from cheap local evidence; symbolic shapes
and exact dtypes of fresh buffers and of the rows a loop writes into them.

`lax.fori_loop`, `lax.scan` and `lax.while_loop` need every carried value to keep its shape and dtype from one
step to the next; a Python loop does not. Before a loop codemod rewrites, it asks here whether a carried value
keeps its rank (`rank`), whether an update changes its shape (`reshaping`), and whether an update changes its
dtype category (`category`: an int array times 0.5 becomes float, which lax rejects at trace time). Every
answer is either proven from the code or None ("unknown"): callers decide what unknown means for them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import cached_property

import libcst as cst
from libcst.metadata import GlobalScope, ScopeProvider

from jaxfix.analysis.arrays import DTYPE_POSITION
from jaxfix.analysis.dataflow import UNDEFINED, Parameter
from jaxfix.analysis.syntax import AT_METHODS, is_full_slice, is_none, is_number, mentions
from jaxfix.analysis.traced import Kind
from jaxfix.facts.knowledge.jax import (  # noqa: F401 (some read by the screen through this module)
    ELEMENTWISE, FILLED, FILLED_DTYPE_POSITION, FLOAT_PRESERVING, LIKE, LIKE_DTYPE_POSITION, MATMULS, RANK_ONE,
    REDUCTIONS, RESHAPING,
)
from jaxfix.facts.knowledge.jax import BOOL_RESULT as _TO_BOOL, FLOAT_BY_DEFAULT as _FLOAT_BY_DEFAULT
from jaxfix.facts.knowledge.jax import INEXACT_RESULT as _TO_INEXACT, INT_RESULT as _TO_INT
from jaxfix.facts.knowledge.jax import KIND_KEEPING as _KEEP_CATEGORY, RANDOM_FLOAT as _RANDOM_FLOAT
from jaxfix.facts.knowledge.jaxtyping import DTYPE_WRAPPERS, WRAPPER_KINDS
from jaxfix.facts.model import ModuleModel

_JNP = "jax.numpy."


RESHAPING_METHODS = frozenset({"reshape", "ravel", "flatten", "squeeze", "repeat", "T", "transpose", "swapaxes"})
REDUCTION_METHODS = frozenset("sum mean max min prod std var all any argmax argmin ptp".split())


class Category(enum.IntEnum):
    """A dtype's kind, ordered as JAX promotes across kinds (bool < int < float < complex)."""

    BOOL = 0
    INT = 1
    FLOAT = 2
    COMPLEX = 3


_DTYPE_NAMES = {
    **{name: Category.BOOL for name in ("bool", "bool_")},
    **{name: Category.INT for name in "int int8 int16 int32 int64 uint8 uint16 uint32 uint64".split()},
    **{name: Category.FLOAT for name in "float float16 float32 float64 bfloat16".split()},
    **{name: Category.COMPLEX for name in "complex complex64 complex128".split()},
}


class ShapeAnalysis:
    def __init__(self, context: ModuleModel) -> None:
        self._context = context
        self._scopes = context.wrapper.resolve(ScopeProvider)

    @cached_property
    def symbolic(self) -> "SymbolicShapes":
        """Shapes and exact dtypes as comparable tokens (fresh buffers and the rows written into them)."""
        return SymbolicShapes(self._context)

    def _callee(self, call: cst.Call) -> str | None:
        # Nodes built by a codemod (the `x + v` of `x += v`) have no metadata.
        return self._context.names.callee(call) if call in self._context.parents else None

    # ---- integer constants ---------------------------------------------------------------------------------

    def constant(self, expr: cst.BaseExpression, seen: frozenset = frozenset()) -> int | None:
        """The value of an integer expression made of literals and module constants, or None."""
        if isinstance(expr, cst.Integer):
            return int(expr.evaluated_value)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            inner = self.constant(expr.expression, seen)
            return None if inner is None else (-inner if isinstance(expr.operator, cst.Minus) else inner)
        if isinstance(expr, cst.BinaryOperation):
            left, right = self.constant(expr.left, seen), self.constant(expr.right, seen)
            if left is None or right is None:
                return None
            op = expr.operator
            if isinstance(op, cst.Add):
                return left + right
            if isinstance(op, cst.Subtract):
                return left - right
            if isinstance(op, cst.Multiply):
                return left * right
            if isinstance(op, cst.FloorDivide) and right:
                return left // right
            if isinstance(op, cst.Power) and 0 <= right < 64:
                return left**right
            return None
        if isinstance(expr, cst.Name) and expr.value not in seen:
            assign = self._single_module_assignment(expr)
            if assign is not None:
                return self.constant(assign.value, seen | {expr.value})
        return None

    def _single_module_assignment(self, name: cst.Name) -> cst.Assign | None:
        scope = self._scopes.get(name)
        if scope is None:
            return None
        assignments = list(scope[name.value])
        if len(assignments) != 1 or not isinstance(assignments[0].scope, GlobalScope):
            return None
        return self._plain_assignment(assignments[0])

    def _range_index(self, assignment) -> bool:
        """Whether a binding is the target of `for i in range(...)` (or `reversed(range(...))`): a Python int."""
        target = getattr(assignment, "node", None)
        loop = self._context.parents.get(target) if isinstance(target, cst.Name) else None
        if not isinstance(loop, cst.For) or loop.target is not target:
            return False
        it = loop.iter
        names = self._context.names
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "reversed" and len(it.args) == 1:
            if not names.is_builtin(it.func, "reversed"):
                return False
            it = it.args[0].value
        return (
            isinstance(it, cst.Call)
            and isinstance(it.func, cst.Name)
            and it.func.value == "range"
            and names.is_builtin(it.func, "range")
            and all(a.keyword is None and not a.star for a in it.args)
        )

    def _plain_assignment(self, assignment) -> cst.Assign | None:
        """The `name = value` statement of a binding, when it is one (not `a, b = ...`, not a parameter)."""
        parents = self._context.parents
        target = getattr(assignment, "node", None)
        holder = parents.get(target) if isinstance(target, cst.Name) else None
        assign = parents.get(holder) if isinstance(holder, cst.AssignTarget) else None
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.targets[0].target is target:
            return assign
        return None

    # ---- shape changes -------------------------------------------------------------------------------------

    def reshaping(self, value: cst.BaseExpression, name: str) -> str | None:
        """An operation that gives the new value of the carried `name` a shape other than its old one
        (`jnp.concatenate([x, y])`, `x[1:]`, `x.reshape(...)`, `x + [y]`), as text for a message. Only the
        operations whose result becomes the value count: `x.at[1:].set(x[:-1])` keeps the shape of `x`."""
        for node in self.spine(value):
            if isinstance(node, cst.Call):
                callee = self._callee(node)
                if callee in RESHAPING and any(mentions(arg.value, name) for arg in node.args):
                    return self._context.code_for(node.func)
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value in RESHAPING_METHODS and mentions(func.value, name):
                    return f".{func.attr.value}()"
            elif isinstance(node, cst.Attribute) and node.attr.value in ("T", "mT") and mentions(node.value, name):
                return f".{node.attr.value}"
            elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == name:
                if not all(is_full_slice(element.slice) for element in node.slice):
                    return f"{name}[...]"
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Multiply)):
                sides = (node.left, node.right)
                if any(isinstance(s, (cst.List, cst.Tuple)) for s in sides) and mentions(node, name):
                    return "a list or tuple that grows"
        return None

    def spine(self, expr: cst.BaseExpression):
        """`expr` and the sub-expressions whose shape it keeps or broadcasts (operands of arithmetic and of
        elementwise functions, the base of `.at[...]` updates and of `.astype`, both arms of `a if c else b`)."""
        yield expr
        if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.MatrixMultiply):
            yield from self.spine(expr.left)
            yield from self.spine(expr.right)
        elif isinstance(expr, cst.UnaryOperation):
            yield from self.spine(expr.expression)
        elif isinstance(expr, cst.IfExp):
            yield from self.spine(expr.body)
            yield from self.spine(expr.orelse)
        elif isinstance(expr, cst.Call):
            if self._callee(expr) in ELEMENTWISE:
                for arg in expr.args:
                    yield from self.spine(arg.value)
            elif isinstance(expr.func, cst.Attribute):
                receiver = expr.func.value
                method = expr.func.attr.value
                if method in AT_METHODS and isinstance(receiver, cst.Subscript):
                    at = receiver.value
                    if isinstance(at, cst.Attribute) and at.attr.value == "at":
                        yield from self.spine(at.value)
                elif method == "astype":
                    yield from self.spine(receiver)

    # ---- ranks ---------------------------------------------------------------------------------------------

    def rank(self, expr: cst.BaseExpression, env: dict[str, int | None] | None = None, depth: int = 0) -> int | None:
        """The number of dimensions `expr` has, when cheap evidence proves it; None when unknown. `env` gives
        the ranks of names (the carried values of a loop) that the code alone cannot."""
        env = env or {}
        if depth > 12:
            return None
        rank = lambda e: self.rank(e, env, depth + 1)  # noqa: E731
        if is_number(expr):
            return 0
        if isinstance(expr, cst.Name):
            if expr.value in env:
                return env[expr.value]
            return self._name_rank(expr, depth)
        if isinstance(expr, cst.UnaryOperation):
            return rank(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            left, right = rank(expr.left), rank(expr.right)
            if left is None or right is None:
                return None
            if isinstance(expr.operator, cst.MatrixMultiply):
                return _matmul_rank(left, right)
            return max(left, right)
        if isinstance(expr, cst.Comparison):
            parts = [rank(expr.left), *(rank(c.comparator) for c in expr.comparisons)]
            return None if None in parts else max(parts)
        if isinstance(expr, cst.IfExp):
            body, orelse = rank(expr.body), rank(expr.orelse)
            return body if body == orelse else None
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("ndim", "size"):
                return 0
            if expr.attr.value in ("real", "imag"):
                return rank(expr.value)
            return None
        if isinstance(expr, cst.Subscript):
            base = expr.value
            if isinstance(base, cst.Attribute) and base.attr.value == "shape":
                return 0 if all(isinstance(e.slice, cst.Index) for e in expr.slice) else None
            base_rank = rank(base)
            if base_rank is None:
                return None
            result = base_rank
            for element in expr.slice:
                inner = element.slice
                if isinstance(inner, cst.Slice):
                    continue
                if is_none(inner.value) or isinstance(inner.value, cst.Ellipsis):
                    return None
                if rank(inner.value) != 0:
                    return None
                result -= 1
            return result if result >= 0 else None
        if isinstance(expr, cst.Call):
            return self._call_rank(expr, env, depth)
        return None

    def least_rank(self, expr: cst.BaseExpression) -> int | None:
        """A rank `expr` is known to reach at least, where its exact one is unknown: broadcasting never lowers
        a rank, so `grid > t` has at least the rank of `grid`. None when nothing is known."""
        exact = self.rank(expr)
        if exact is not None:
            return exact
        if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.MatrixMultiply):
            parts = [expr.left, expr.right]
        elif isinstance(expr, cst.Comparison):
            parts = [expr.left, *(c.comparator for c in expr.comparisons)]
        elif isinstance(expr, cst.UnaryOperation):
            parts = [expr.expression]
        else:
            return None
        known = [r for r in (self.least_rank(p) for p in parts) if r is not None]
        return max(known) if known else None

    def _call_rank(self, call: cst.Call, env, depth: int) -> int | None:
        rank = lambda e: self.rank(e, env, depth + 1)  # noqa: E731
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if any(a.star for a in call.args):
            return None
        func = call.func
        callee = self._callee(call)
        names = self._context.names
        if callee is None and isinstance(func, cst.Name) and names.is_builtin(func, func.value):
            if func.value in ("len", "int", "float"):
                return 0
            if func.value == "abs" and positional:
                return rank(positional[0])
            return None
        if callee is None and isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in REDUCTION_METHODS and not call.args:
                return 0
            if method == "astype":
                return rank(func.value)
            if method in AT_METHODS and isinstance(func.value, cst.Subscript):
                at = func.value.value
                if isinstance(at, cst.Attribute) and at.attr.value == "at":
                    return rank(at.value)
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

    def _name_rank(self, name: cst.Name, depth: int) -> int | None:
        """A name's rank: the same for each of its bindings in the function, where each one proves it."""

        def of_param(param: cst.Param, assignment) -> int | None:
            if self._context.traced.kind(name) is Kind.STATIC and not isinstance(assignment.scope, GlobalScope):
                return 0  # a static (hashable) argument used with arrays: a Python number
            if _number_annotation(param):
                return 0  # `gamma: float`: a Python number, or a 0-d array once jit traces it
            return annotation_rank(param)

        return self._per_binding(name, of_param, lambda value: self.rank(value, {}, depth + 1))

    def _per_binding(self, name: cst.Name, of_param, of_value):
        """What every binding of `name` says alike (`of_param` for a parameter, `of_value` for the value of
        `name = value`), or None when a binding is of another form or two disagree."""
        scope = self._scopes.get(name)
        assignments = list(scope[name.value]) if scope is not None else []
        found = set()
        for assignment in assignments:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.Param):
                found.add(of_param(node, assignment))
                continue
            if self._range_index(assignment):
                found.add(of_value(cst.Integer("0")))  # a Python int, like any literal int
                continue
            assign = self._plain_assignment(assignment)
            if assign is None:
                return None
            found.add(of_value(assign.value))
        return found.pop() if len(found) == 1 else None

    # ---- dtype categories ----------------------------------------------------------------------------------

    def category(
        self, expr: cst.BaseExpression, env: dict[str, Category | None] | None = None, depth: int = 0
    ) -> Category | None:
        """The dtype category of `expr` (bool, int, float, complex) when the code proves it, else None.
        A Python number counts with its own category: JAX's weak typing keeps an array's category when a
        Python number of a lower one meets it, and promotes to the higher category otherwise, so the
        maximum of the operands' categories is the result's either way."""
        env = env or {}
        if depth > 12:
            return None
        category = lambda e: self.category(e, env, depth + 1)  # noqa: E731
        if isinstance(expr, cst.Integer):
            return Category.INT
        if isinstance(expr, cst.Float):
            return Category.FLOAT
        if isinstance(expr, cst.Imaginary):
            return Category.COMPLEX
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False"):
                return Category.BOOL
            if expr.value in env:
                return env[expr.value]
            return self._name_category(expr, depth)
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return None  # `not x` on an array raises; on a Python value it is a bool
            inner = category(expr.expression)
            if isinstance(expr.operator, cst.Minus) and inner is Category.BOOL:
                return None  # negating a bool array raises
            return inner
        if isinstance(expr, cst.BinaryOperation):
            left, right = category(expr.left), category(expr.right)
            if left is None or right is None:
                return None
            joined = max(left, right)
            if isinstance(expr.operator, cst.Divide):
                return max(joined, Category.FLOAT)
            if joined is Category.BOOL:
                return None  # Python bools add up to ints, bool arrays do not: it depends on which they are
            return joined
        if isinstance(expr, cst.Comparison):
            return Category.BOOL
        if isinstance(expr, cst.IfExp):
            body, orelse = category(expr.body), category(expr.orelse)
            return None if body is None or orelse is None else max(body, orelse)
        if isinstance(expr, cst.Subscript):
            base = expr.value
            if isinstance(base, cst.Attribute) and base.attr.value == "shape":
                return Category.INT
            return category(base)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("ndim", "size"):
                return Category.INT
            if expr.attr.value in ("T", "mT"):
                return category(expr.value)
            return None
        if isinstance(expr, cst.Call):
            return self._call_category(expr, env, depth)
        return None

    def least_category(self, expr: cst.BaseExpression, env: dict[str, Category | None] | None = None) -> Category | None:
        """A category `expr` is known to reach at least, where its exact one is unknown: `x * 0.5` is at least
        float whatever `x` is, since promotion never lowers a category. None when nothing is known."""
        env = env or {}
        exact = self.category(expr, env)
        if exact is not None:
            return exact
        least = lambda e: self.least_category(e, env)  # noqa: E731
        if isinstance(expr, cst.BinaryOperation):
            known = [c for c in (least(expr.left), least(expr.right)) if c is not None]
            if isinstance(expr.operator, cst.Divide):
                known.append(Category.FLOAT)
            return max(known) if known else None
        if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            return least(expr.expression)
        if isinstance(expr, cst.IfExp):
            body, orelse = least(expr.body), least(expr.orelse)
            return None if body is None or orelse is None else min(body, orelse)
        if isinstance(expr, cst.Call) and not any(a.star or a.keyword for a in expr.args):
            callee = self._callee(expr)
            known = [c for c in (least(a.value) for a in expr.args) if c is not None]
            if callee in _TO_INEXACT:
                return max([*known, Category.FLOAT])
            if callee in _KEEP_CATEGORY and callee.rsplit(".", 1)[-1] not in ("where", "sum", "prod", "clip"):
                return max(known) if known else None
        return None

    def different_categories(
        self, a: cst.BaseExpression, b: cst.BaseExpression
    ) -> tuple[Category, Category] | None:
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

    def dtype_category(self, expr: cst.BaseExpression) -> Category | None:
        """The category a dtype expression names (`jnp.float32`, `float`, `"int32"`, `jnp.bool_`)."""
        if isinstance(expr, cst.SimpleString):
            return _DTYPE_NAMES.get(expr.evaluated_value)
        if isinstance(expr, cst.Name) and self._context.names.is_builtin(expr, expr.value):
            return _DTYPE_NAMES.get(expr.value)
        qualified = self._context.names.qualified(expr)
        if qualified is not None and (qualified.startswith(_JNP) or qualified.startswith("numpy.")):
            return _DTYPE_NAMES.get(qualified.rsplit(".", 1)[-1])
        return None

    def _call_category(self, call: cst.Call, env, depth: int) -> Category | None:
        category = lambda e: self.category(e, env, depth + 1)  # noqa: E731
        if any(a.star for a in call.args):
            return None
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        func = call.func
        callee = self._callee(call)
        if "dtype" in keywords:
            return self.dtype_category(keywords["dtype"])
        position = DTYPE_POSITION.get(callee)
        if position is not None and len(positional) > position:
            return self.dtype_category(positional[position])  # jnp.zeros((), jnp.int32)
        if callee is None and isinstance(func, cst.Name) and self._context.names.is_builtin(func, func.value):
            return {"float": Category.FLOAT, "int": Category.INT, "bool": Category.BOOL, "len": Category.INT}.get(
                func.value
            )
        if callee is None and isinstance(func, cst.Attribute):
            method = func.attr.value
            if method == "astype" and positional:
                return self.dtype_category(positional[0])
            if method in AT_METHODS and isinstance(func.value, cst.Subscript):
                at = func.value.value
                if isinstance(at, cst.Attribute) and at.attr.value == "at":
                    return category(at.value)  # the update is cast to the array's dtype
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
        if callee.startswith(_JNP) and short in _DTYPE_NAMES:  # jnp.float32(x)
            return _DTYPE_NAMES[short]
        if callee in _FLOAT_BY_DEFAULT:
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
        if callee in _RANDOM_FLOAT:
            return Category.FLOAT
        if callee == "jax.random.randint":
            return Category.INT
        if callee in _TO_BOOL:
            return Category.BOOL
        if callee in _TO_INT:
            return Category.INT
        arrays = positional[1:3] if short == "where" else positional[:1] if short in ("sum", "prod") else positional
        if short == "clip":
            arrays = positional[:1]
        parts = [category(p) for p in arrays]
        if not parts or None in parts:
            return None
        joined = max(parts)
        if callee in _TO_INEXACT:
            return max(joined, Category.FLOAT)
        if callee in _KEEP_CATEGORY:
            if short in ("sum", "prod", "cumsum", "cumprod") and joined is Category.BOOL:
                return Category.INT
            return joined
        return None

    def _name_category(self, name: cst.Name, depth: int) -> Category | None:
        """A name's category: the same for each of its bindings, where each one proves it."""
        return self._per_binding(
            name, lambda param, _: annotation_category(param), lambda value: self.category(value, {}, depth + 1)
        )


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


def shape_rank(shape: cst.BaseExpression) -> int | None:
    """The rank an array of this shape argument has (`(n, d)` → 2, `5` → 1, `x.shape[0]` → 1)."""
    if isinstance(shape, (cst.Tuple, cst.List)):
        if any(isinstance(e, cst.StarredElement) for e in shape.elements):
            return None
        return len(shape.elements)
    if isinstance(shape, cst.Integer):
        return 1
    if isinstance(shape, cst.Subscript) and isinstance(shape.value, cst.Attribute):
        if shape.value.attr.value == "shape" and all(isinstance(e.slice, cst.Index) for e in shape.slice):
            return 1  # x.shape[0]: one dimension
    return None


def _jaxtyping(param: cst.Param) -> tuple[str, str] | None:
    """(`Float`, `"n d"`) for a parameter annotated `Float[Array, "n d"]`."""
    annotation = param.annotation.annotation if param.annotation is not None else None
    if not isinstance(annotation, cst.Subscript) or len(annotation.slice) != 2:
        return None
    head = annotation.value
    head_name = head.attr.value if isinstance(head, cst.Attribute) else getattr(head, "value", None)
    dims = annotation.slice[1].slice
    if head_name not in DTYPE_WRAPPERS or not isinstance(dims, cst.Index) or not isinstance(dims.value, cst.SimpleString):
        return None
    return head_name, dims.value.evaluated_value


def _number_annotation(param: cst.Param) -> bool:
    """`x: float` or `x: int`: a scalar, whether a Python number or the 0-d array jit traces it as."""
    annotation = param.annotation.annotation if param.annotation is not None else None
    return isinstance(annotation, cst.Name) and annotation.value in ("float", "int")


def annotation_rank(param: cst.Param) -> int | None:
    """The rank a jaxtyping annotation gives (`Float[Array, "n d"]` → 2); None without one."""
    found = _jaxtyping(param)
    if found is None:
        return None
    parts = found[1].split()
    if any(p.startswith("*") or "..." in p or p.startswith("#") for p in parts):
        return None
    return len(parts)


_JAXTYPING_CATEGORY = {wrapper: Category[kind.upper()] for wrapper, kind in WRAPPER_KINDS.items()}


def annotation_category(param: cst.Param) -> Category | None:
    """The category a parameter's annotation gives: jaxtyping's `Float[...]`, `Int[...]`; `float`, `int`."""
    found = _jaxtyping(param)
    if found is not None:
        return _JAXTYPING_CATEGORY.get(found[0])
    annotation = param.annotation.annotation if param.annotation is not None else None
    if isinstance(annotation, cst.Name):
        return {"float": Category.FLOAT, "int": Category.INT, "bool": Category.BOOL}.get(annotation.value)
    return None


# ---- symbolic shapes and exact dtypes of fresh buffers ---------------------------------------------------------
#
# A loop that fills a fresh buffer row by row (`out = jnp.zeros((n, d))`, then `out = out.at[i].set(v)` for each
# `i < n`) computes what a stacking transform (lax.scan, jax.vmap) computes only when the loop runs exactly as
# many steps as the buffer has rows and each `v` has a row's shape and dtype (`.at[i].set` broadcasts and casts,
# stacking does not). JF301 (loop to vmap) proves both here; JF104 (fori_loop to scan) reads the same answers on
# `ast` from jaxfix/facts/symbolic.py, which this copy becomes a twin of until JF301 moves.
#
# A shape is a tuple of parts: ("const", 3), ("dim", key, k) for `x.shape[k]`, ("name", key) for an integer
# variable, and ("spread", key, k) for the dimensions `x.shape[k:]`. A key names one value of a variable: the set
# of its bindings that reach the place it is read (so `n` read twice with no assignment in between is one key),
# or ("free", name) for a name the enclosing function does not bind. A dtype is a token: ("default", "float")
# for the default dtype of a kind, ("dtype", "float32"), or ("dtype-of", key) for `x.dtype`.

SymbolicShape = tuple
DtypeToken = tuple
_DEFAULT_DTYPES = {"float": "float", "int": "int", "bool": "bool", "complex": "complex"}
KINDS = ("bool", "int", "float", "complex")  # in the order JAX promotes across them
@dataclass
class FreshBuffer:
    """A fresh array `jnp.zeros((n, d))` (or `*_like`, `full`), where it is built and what rows it has."""

    call: cst.Call
    statement: cst.CSTNode  # where it is evaluated
    parts: SymbolicShape | None  # its whole shape
    leading: tuple | None  # its leading dimension
    row: SymbolicShape | None  # the shape of one row
    dtype: DtypeToken | None
    # How its dtype is spelled: ("code", dtype expression), ("dtype-of", name, key) for `*_like(name)`,
    # ("kind", "float") for a default dtype; None where it cannot be said.
    spelling: tuple | None
    binding: cst.CSTNode | None = None  # the `out = jnp.zeros(...)` line it comes from, when it is one


class SymbolicShapes:
    """Shapes and exact dtypes as tokens that two places of one function can compare (see above)."""

    def __init__(self, context: ModuleModel) -> None:
        self._context = context

    # ---- values of names -------------------------------------------------------------------------------------

    def key(self, name: str, where: cst.CSTNode):
        """Which value of `name` the statement `where` reads: the set of its bindings that reach there."""
        flow = self._flow_at(where)
        if flow is None:
            return None
        if name not in flow.locals:
            return ("free", name)
        sources = flow.reaching(where, name)
        if not sources or UNDEFINED in sources:
            return None
        return frozenset(id(s.param) if isinstance(s, Parameter) else id(s) for s in sources)

    def single_value(self, name: str, where: cst.CSTNode) -> cst.BaseExpression | None:
        """The value of the one `name = value` that reaches the statement `where`, if there is exactly one."""
        flow = self._flow_at(where)
        sources = flow.reaching(where, name) if flow is not None else frozenset()
        if len(sources) != 1:
            return None
        (source,) = sources
        return source if isinstance(source, cst.BaseExpression) else None

    def statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        parents = self._context.parents
        current = node
        while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            current = parents.get(current)
        return current

    def _flow_at(self, where: cst.CSTNode):
        dataflow = self._context.dataflow
        return dataflow.flow(dataflow.enclosing_function(where))

    # ---- fresh buffers -------------------------------------------------------------------------------------

    def fresh(self, expr: cst.BaseExpression, where: cst.CSTNode, depth: int = 0, integer=None) -> FreshBuffer | str:
        """`expr` as a fresh array (`jnp.zeros((n, d))`, or a name bound to one), or what it is instead (the code
        to show). `integer`: a ("name", key) dimension known to hold an integer (a loop's bound)."""
        code = self._context.code_for(expr)
        shown = f"`{_snippet(code)}`"
        if isinstance(expr, cst.Name) and depth < 3:
            value = self.single_value(expr.value, where)
            if value is None:
                return shown
            found = self.fresh(value, self.statement(value), depth + 1, integer)
            if isinstance(found, FreshBuffer) and found.binding is None:
                binding = self.statement(value)
                assign = _single_assign(binding)
                if assign is not None and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                    found.binding = binding
            return found
        if not isinstance(expr, cst.Call) or any(a.star for a in expr.args):
            return shown
        callee = self._context.names.callee(expr)
        positional = [a.value for a in expr.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in expr.args if a.keyword is not None}
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
            key = self.key(array.value, where) if isinstance(array, cst.Name) else None
            parts = (("spread", key, 0),) if key is not None else None
        leading, row = split_leading(parts)
        dtype, spelling = self._buffer_dtype(given, callee, where)
        return FreshBuffer(expr, where, parts, leading, row, dtype, spelling)

    def _buffer_dtype(self, given: dict, callee: str, where) -> tuple[DtypeToken | None, tuple | None]:
        dtype = given.get("dtype")
        if dtype is not None and not (isinstance(dtype, cst.Name) and dtype.value == "None"):
            return self.dtype_token(dtype, where), ("code", dtype)
        if callee in LIKE_DTYPE_POSITION:
            array = given.get("a")
            if isinstance(array, cst.Name):
                key = self.key(array.value, where)
                return (("dtype-of", key) if key is not None else None), ("dtype-of", array, key)
            return None, None
        if callee.endswith("full"):
            fill = given.get("fill_value")
            kind = literal_kind(fill) if fill is not None else None
            if kind is None and fill is not None and self._context.names.qualified(fill) in ("jax.numpy.nan", "jax.numpy.inf"):
                kind = "float"
            return (("default", kind), ("kind", kind)) if kind else (None, None)
        return ("default", "float"), ("kind", "float")

    def dtype_token(self, dtype: cst.BaseExpression, where) -> DtypeToken | None:
        """A dtype expression (`jnp.float32`, `"int32"`, `float`, `x.dtype`) as a token."""
        if isinstance(dtype, cst.SimpleString):
            return ("dtype", dtype.evaluated_value)
        names = self._context.names
        if isinstance(dtype, cst.Name) and dtype.value in _DEFAULT_DTYPES and names.is_builtin(dtype, dtype.value):
            return ("default", _DEFAULT_DTYPES[dtype.value])
        qualified = names.qualified(dtype)
        if qualified is not None and qualified.startswith(("jax.numpy.", "numpy.")):
            return ("dtype", qualified.rsplit(".", 1)[-1])
        if isinstance(dtype, cst.Attribute) and dtype.attr.value == "dtype" and isinstance(dtype.value, cst.Name):
            key = self.key(dtype.value.value, where)
            return ("dtype-of", key) if key is not None else None
        return None

    # ---- shapes --------------------------------------------------------------------------------------------

    def shape_parts(self, shape: cst.BaseExpression, where, depth: int = 0, integer=None) -> SymbolicShape | None:
        """A shape argument (`(n, d)`, `x.shape`, `x.shape[1:] + (3,)`, a name bound to one) as parts."""
        if isinstance(shape, (cst.Tuple, cst.List)):
            parts: list = []
            for element in shape.elements:
                if isinstance(element, cst.StarredElement):
                    spread = self.spread(element.value, where)
                    if spread is None:
                        return None
                    parts.append(spread)
                else:
                    dim = self.dim(element.value, where)
                    if dim is None:
                        return None
                    parts.append(dim)
            return tuple(parts)
        if isinstance(shape, cst.BinaryOperation) and isinstance(shape.operator, cst.Add) and tuple_like(shape):
            left = self.shape_parts(shape.left, where, depth, integer)
            right = self.shape_parts(shape.right, where, depth, integer)
            return None if left is None or right is None else left + right
        spread = self.spread(shape, where)
        if spread is not None:
            return (spread,)
        if isinstance(shape, cst.Name) and depth < 3:
            value = self.single_value(shape.value, where)
            if value is not None and tuple_like(value):
                return self.shape_parts(value, self.statement(value), depth + 1, integer)
        dim = self.dim(shape, where)
        if dim is not None and dim[0] == "name" and isinstance(shape, cst.Name) and dim != integer:
            return None  # a name may hold a tuple as well as a number
        return (dim,) if dim is not None else None

    def spread(self, expr: cst.BaseExpression, where) -> tuple | None:
        """`x.shape` → ("spread", x, 0); `x.shape[k:]` → ("spread", x, k)."""
        start = 0
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice):
            piece = expr.slice[0].slice
            if piece.upper is not None or piece.step is not None:
                return None
            start = 0 if piece.lower is None else self._context.shapes.constant(piece.lower)
            if start is None or start < 0:
                return None
            expr = expr.value
        if isinstance(expr, cst.Attribute) and expr.attr.value == "shape" and isinstance(expr.value, cst.Name):
            key = self.key(expr.value.value, where)
            return ("spread", key, start) if key is not None else None
        return None

    def dim(self, expr: cst.BaseExpression, where, depth: int = 0) -> tuple | None:
        """One dimension (an integer) as a token that two places can compare."""
        constant = self._context.shapes.constant(expr)
        if constant is not None:
            return ("const", constant)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            base = expr.value
            if isinstance(base, cst.Attribute) and base.attr.value == "shape" and isinstance(base.value, cst.Name):
                k = self._context.shapes.constant(expr.slice[0].slice.value)
                key = self.key(base.value.value, where)
                return ("dim", key, k) if k is not None and k >= 0 and key is not None else None
            return None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len":
            args = expr.args
            if len(args) == 1 and not args[0].star and args[0].keyword is None and isinstance(args[0].value, cst.Name):
                if self._context.names.is_builtin(expr.func, "len"):
                    key = self.key(args[0].value.value, where)
                    return ("dim", key, 0) if key is not None else None
            return None
        if isinstance(expr, cst.Name):
            value = self.single_value(expr.value, where) if depth < 3 else None
            if value is not None:
                found = self.dim(value, self.statement(value), depth + 1)
                if found is not None:
                    return found
            key = self.key(expr.value, where)
            return ("name", key) if key is not None else None
        return None

    def leading_dims(self, name: str, where) -> list:
        """Dimension tokens equal to the number of rows of the array `name` holds at `where`: `name.shape[0]`,
        and `n` where it is `jax.random.split(key, n)`."""
        key = self.key(name, where)
        found = [("dim", key, 0)] if key is not None else []
        value = self.single_value(name, where)
        if isinstance(value, cst.Call) and self._context.names.callee(value) == "jax.random.split":
            args = value.args
            if len(args) == 2 and all(a.keyword is None and not a.star for a in args):
                dim = self.dim(args[1].value, self.statement(value))
                if dim is not None:
                    found.append(dim)
        return found

    # ---- what a row value is -------------------------------------------------------------------------------

    def elementwise_facts(self, expr: cst.BaseExpression, facts_of, astype_dtype) -> tuple[list, list] | None:
        """The shapes and dtypes an elementwise expression (arithmetic, `x.astype(d)`, `jnp.tanh(x)`, ...) is
        proven to have, from those of its operands (`facts_of(operand)` → (shapes, dtypes)); `astype_dtype(d)`
        is the token of the dtype argument of `astype`. None when `expr` is none of these."""
        names = self._context.names
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "astype":
            shapes, _ = facts_of(expr.func.value)
            args = expr.args
            dtype = None
            if len(args) == 1 and args[0].keyword is None and not args[0].star:
                dtype = astype_dtype(args[0].value)
            return shapes, ([dtype] if dtype is not None else [])
        operands = None
        keeps_dtype: bool | None = True  # None: for float operands only
        if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.MatrixMultiply):
            operands = [expr.left, expr.right]
            keeps_dtype = None if isinstance(expr.operator, cst.Divide) else True
        elif isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            operands = [expr.expression]
        elif isinstance(expr, cst.Call) and names.callee(expr) in ELEMENTWISE:
            if all(a.keyword is None and not a.star for a in expr.args):
                operands = [a.value for a in expr.args]
                # Only these keep a float dtype (tanh of an int array is float, isnan is bool, abs of complex
                # is float, float16(x) is float16).
                keeps_dtype = None if names.callee(expr) in FLOAT_PRESERVING else False
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
                kind = token_kind(dtype)
                if kind is None and (numbers or keeps_dtype is not True):
                    continue
                if numbers and not all(n is not None and KINDS.index(n) <= KINDS.index(kind) for n in numbers):
                    continue
                if keeps_dtype is False:
                    continue
                if keeps_dtype is None and kind != "float":
                    continue  # a division or an inexact function of an integer array is a float array
                dtypes_out.append(dtype)
        return shapes_out, dtypes_out


def tuple_like(expr: cst.BaseExpression) -> bool:
    """A shape tuple written out, `x.shape`, `x.shape[k:]`, or a sum of those."""
    if isinstance(expr, (cst.Tuple, cst.List)):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return tuple_like(expr.left) or tuple_like(expr.right)
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice):
        expr = expr.value
    return isinstance(expr, cst.Attribute) and expr.attr.value == "shape"


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


def literal_kind(expr: cst.BaseExpression) -> str | None:
    """The kind of a Python number literal (`-2.0` → float), None for anything else."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, cst.Float):
        return "float"
    if isinstance(expr, cst.Integer):
        return "int"
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return "bool"
    if isinstance(expr, cst.Imaginary):
        return "complex"
    return None


def _single_assign(statement) -> cst.Assign | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign):
        return statement.body[0]
    return None


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
