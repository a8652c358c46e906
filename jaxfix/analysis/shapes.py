"""Ranks, dtype categories and integer constants of expressions, from cheap local evidence (symbolic shapes and
exact dtypes of fresh buffers are facts/symbolic.py's, on `ast`).

`lax.fori_loop`, `lax.scan` and `lax.while_loop` need every carried value to keep its shape and dtype from one
step to the next; a Python loop does not. Before a loop codemod rewrites, it asks here whether a carried value
keeps its rank (`rank`), whether an update changes its shape (`reshaping`), and whether an update changes its
dtype category (`category`: an int array times 0.5 becomes float, which lax rejects at trace time). Every
answer is either proven from the code or None ("unknown"): callers decide what unknown means for them.
"""

from __future__ import annotations

import enum

import libcst as cst
from libcst.metadata import GlobalScope, ScopeProvider

from jaxfix.analysis.arrays import DTYPE_POSITION
from jaxfix.analysis.syntax import AT_METHODS, is_full_slice, is_none, is_number, mentions
from jaxfix.analysis.traced import Kind
from jaxfix.facts.knowledge.jax import (  # noqa: F401 (some read by the screen through this module)
    ELEMENTWISE, FILLED, LIKE, MATMULS, RANK_ONE, REDUCTIONS, RESHAPING,
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
