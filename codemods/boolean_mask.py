"""JF801 boolean-mask-in-traced: `x[mask]` with a traced boolean mask has a data-dependent shape, which jit
cannot stage; a masked sum or mean keeps the shape and becomes `jnp.where`/`where=`."""

from __future__ import annotations

import ast
import builtins
from typing import Callable

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.predicates import _BOOLEAN_CALLS as _BOOLEAN_FUNCTIONS, _BOOLEAN_METHODS
from jaxfix.analysis.screen import (
    Screen, other_bindings, ast_children, in_scoped_traced_function, may_be_boolean_call, may_be_tracer_strict,
    traced_nodes,
)
from jaxfix.facts.knowledge.jax import BOOL_RESULT as _TO_BOOL  # boolean-producing jax.numpy calls
from jaxfix.analysis.syntax import is_number
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

ERROR = "NonConcreteBooleanIndexError"
QUOTE = f"{ERROR}: Array boolean indices must be concrete"
_REDUCTIONS = {"sum": "jax.numpy.sum", "mean": "jax.numpy.mean"}
# Elementwise predicates of one array: `jnp.isnan(x)` has x's shape.
_ELEMENTWISE_TESTS = frozenset(
    "jax.numpy." + n for n in "isnan isfinite isinf isposinf isneginf signbit isreal iscomplex".split()
)
_LOGICAL = frozenset({"jax.numpy.logical_and", "jax.numpy.logical_or", "jax.numpy.logical_xor"})
_BITWISE = (cst.BitAnd, cst.BitOr, cst.BitXor)


class BooleanMask(Codemod):
    """
    ## What it does
    Finds indexing with a boolean mask, `x[mask]` (and `x.at[mask]`), inside code that jit, vmap or a lax
    body traces, where the mask is a traced boolean array (a comparison of traced arrays, `jnp.isnan(x)`,
    their `&`/`|`/`~`). A masked sum or mean, whose mask is proven to have the shape of `x`, is rewritten:
    `x[mask].sum()` and `jnp.sum(x[mask])` → `jnp.sum(jnp.where(mask, x, 0))`, `x[mask].mean()` and
    `jnp.mean(x[mask])` → `jnp.mean(x, where=mask)`. Every other use is reported.

    ## Why is this bad?
    The result of `x[mask]` has as many elements as the mask has `True`s: a shape that depends on the data.
    jit compiles for shapes known before the data, so tracing fails with
    `NonConcreteBooleanIndexError: Array boolean indices must be concrete`. The function runs eagerly and
    breaks the moment it is jitted or vmapped. The rewrites keep every array at the shape of `x`: masked
    elements count as 0 in the sum and are left out of the mean's numerator and count.

    ## Example
    ```python
    @jax.jit
    def positive_total(x):
        return x[x > 0].sum(), jnp.mean(x[~jnp.isnan(x)])
    ```

    ## Use instead
    ```python
    @jax.jit
    def positive_total(x):
        return jnp.sum(jnp.where(x > 0, x, 0)), jnp.mean(x, where=~jnp.isnan(x))
    ```
    Other uses need a decision only the author can make: keep the shape with `jnp.where(mask, x, fill)`,
    reduce with `where=`, or take a fixed number of elements with `jnp.nonzero(mask, size=k, fill_value=...)`.
    `x.at[mask].set(v)` is `jnp.where(mask, v, x)`.

    ## Fix safety
    Unsafe. The original cannot run under the transformation at all; run eagerly (`jax.disable_jit()`, or a
    direct call of a function that is also jitted elsewhere, which the rewrite changes too) it gives the values
    the rewrite gives, in the same dtype (checked for float, bfloat16, int8, uint8, int32, bool and complex
    inputs: `jnp.where(mask, x, 0)` keeps `x`'s dtype, the 0 being weakly typed, and the sum promotes small
    integers and booleans as the original sum does), except for float rounding:
    - **May compute different numbers.** A float sum or mean may round differently in the last bits: the
      reduction adds the masked-out zeros (or skips them with `where=`) at the positions of `x`, which pairs
      the selected terms differently from the reduction over the compacted `x[mask]`. On CPU with float32
      normal inputs of 9 shapes (7 to 100000 elements, 50 draws each; `benchmarks/mask_rounding.py`), the
      sum's bits differed in 212 of 450 draws (at most 3 units in the last place) and the mean's in 335 of
      450. Integer and boolean sums are unchanged.
    - **Same numbers.** An empty mask gives 0 for the sum and NaN for the mean on both sides.
    The fix is offered only when the mask is built elementwise from `x` itself and scalars (`x > 0`,
    `(x > a) & (x < b)`, `~jnp.isnan(x)`, or a name bound once to one of these, with `x` bound once), so that
    it has `x`'s shape: `jnp.where` would otherwise broadcast, where indexing selects rows. Run
    `jaxfix apply --unsafe-fixes`, or check the rewrite with `--verify`.

    ## When it stays quiet
    Masks that are not proven traced booleans (a NumPy mask, `x[idx]` with integer indices, a static
    configuration), code that no staging transformation traces (plain Python, NumPy, or a function only
    `jax.grad` reaches, which runs eagerly and accepts boolean indices), and assignments `x[mask] = v`.
    Reductions with arguments (`x[mask].sum(axis=0)`) and masks of another array are reported, not rewritten.
    """

    code = "JF801"
    name = "boolean-mask-in-traced"
    summary = f"x[mask] with a traced boolean mask ({ERROR}): masked sum/mean via jnp.where"
    fix_safety = Safety.UNSAFE
    screen = ("[",)

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs, in code that may be traced (with names resolved through the functions around their
        use: `in_scoped_traced_function`), a subscript whose index may be a traced boolean mask
        (`_traced_mask`): a comparison or a boolean call that may be a tracer, `&`/`|`/`^`/`~`/`and`/`or`/`not`
        of such masks, or a name whose bindings in its scope may all make one (`_Names`). The module-wide
        test on the indices' form comes first: it spares most modules the traced-code facts."""
        words = _words(screen)
        booleans = _Booleans(screen, words)
        candidates = [n for n in screen.nodes_of(ast.Subscript) if _may_mask_form(screen, n.slice, booleans)]
        if not candidates:
            return False
        traced = {id(node) for node in traced_nodes(screen, ast.Subscript)}
        names = None
        for node in candidates:
            if id(node) in traced and in_scoped_traced_function(screen, node):
                names = names or _Names(screen, words, booleans)
                if _may_mask(screen, node.slice, names):
                    return True
        return False

    VALID = (
        # not traced
        Valid("import jax.numpy as jnp\n\ndef f(x):\n    return x[x > 0].sum()\n"),
        # integer indices
        Valid("import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, i):\n    return x[i].sum()\n"),
        # a NumPy mask built at trace time from a static shape
        Valid(
            "import jax\nimport numpy as np\n\n@jax.jit\ndef f(x):\n    keep = np.arange(x.shape[0]) > 2\n"
            "    return x[keep]\n"
        ),
        # only jax.grad: runs eagerly
        Valid("import jax\n\ndef loss(x):\n    return x[x > 0].sum()\n\ng = jax.grad(loss)\n"),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return x[x > 0].sum()\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.sum(jnp.where(x > 0, x, 0))\n",
            message=QUOTE,
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    ok = ~jnp.isnan(x)\n"
            "    return jnp.mean(x[ok])\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    ok = ~jnp.isnan(x)\n"
            "    return jnp.mean(x, where=ok)\n",
        ),
        Invalid(
            "import jax\n\n@jax.jit\ndef f(x, y):\n    return x[y > 0].sum()\n",
            None,
            message="not proven to have the shape of `x`",
        ),
        Invalid(
            "import jax\n\n@jax.jit\ndef f(x):\n    return x[x > 0]\n",
            None,
            message="data-dependent",
        ),
    )

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) or node.slice[0].slice.star:
            return
        mask = node.slice[0].slice.value
        parent = self.context.parents.get(node)
        if self._stored(node, parent):
            return
        traced = self.context.traced
        function = traced.enclosing_function(node)
        if function is None or not traced.is_traced(function) or not traced.staged(function):
            return
        if not self._traced_mask(mask, frozenset()):
            return
        code = self.context.code_for
        if _is_at(node.value):
            self.report(
                node,
                f"`{code(node)}` indexes with a traced boolean mask, which fails under jit ({QUOTE}); "
                f"`jnp.where({code(mask)}, new_value, {code(node.value.value)})` updates the masked elements "
                "without changing the shape",
            )
            return
        reduction, call = self._reduction(node, parent)
        prefix = (
            f"`{code(node)}` has a data-dependent shape (as many elements as `{code(mask)}` has True), which fails "
            f"under jit ({QUOTE})"
        )
        if reduction is None:
            self.report(
                node,
                f"{prefix}; keep the shape: `jnp.where(mask, x, fill)`, a reduction with `where=mask`, or "
                "`jnp.nonzero(mask, size=k, fill_value=...)`",
            )
            return
        if not (isinstance(node.value, cst.Name) and self._mask_of(mask, node.value, frozenset())):
            self.report(
                call,
                f"{prefix}; `jnp.{reduction}(x, where=mask)` reduces without indexing, but not rewritten: the mask "
                f"is not proven to have the shape of `{code(node.value)}` (jnp.where would broadcast it)",
            )
            return
        target, needed = self.context.names.expression_for(_REDUCTIONS[reduction])
        jnp_code = code(target).rsplit(".", 1)[0]
        x, m = code(node.value), _bare(code, mask)
        if reduction == "sum":
            text = f"{jnp_code}.sum({jnp_code}.where({m}, {x}, 0))"
        else:
            text = f"{jnp_code}.mean({x}, where={m})"
        new = cst.parse_expression(text).with_changes(lpar=call.lpar, rpar=call.rpar)
        self.report(
            call,
            f"{prefix}; `{text}` computes the same {reduction} at a fixed shape; unsafe: a float {reduction} may "
            "round differently in the last bits",
            self.fix(f"use {text}", [(call, new)], add_imports=[needed] if needed else []),
        )

    # ---- pieces ----------------------------------------------------------------------------------------------

    def _traced_mask(self, mask: cst.BaseExpression, seen: frozenset) -> bool:
        """Whether `mask` surely is a traced boolean array: PredicateAnalysis's booleans, their `&`, `|`, `^`
        and `~`, and a name bound once to one of these."""
        if self.context.predicates.boolean(mask):
            return True
        if isinstance(mask, cst.BinaryOperation) and isinstance(mask.operator, _BITWISE):
            return self._traced_mask(mask.left, seen) and self._traced_mask(mask.right, seen)
        if isinstance(mask, cst.UnaryOperation) and isinstance(mask.operator, cst.BitInvert):
            return self._traced_mask(mask.expression, seen)
        if isinstance(mask, cst.Name) and mask.value not in seen:
            value = self._single_value(mask)
            return value is not None and self._traced_mask(value, seen | {mask.value})
        return False

    def _stored(self, node: cst.Subscript, parent) -> bool:
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and parent.target is node:
            return True
        return isinstance(parent, cst.Del) or isinstance(parent, (cst.Element, cst.Tuple, cst.List)) and isinstance(
            self.context.parents.get(parent), (cst.AssignTarget, cst.Tuple, cst.List)
        )

    def _reduction(self, node: cst.Subscript, parent) -> tuple[str | None, cst.Call | None]:
        """`x[m].sum()` / `jnp.sum(x[m])` (and mean) with no other argument: the reduction and its call."""
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _REDUCTIONS:
            call = self.context.parents.get(parent)
            if isinstance(call, cst.Call) and call.func is parent:
                return (parent.attr.value, call) if not call.args else (None, None)
        if isinstance(parent, cst.Arg) and parent.keyword is None and not parent.star:
            call = self.context.parents.get(parent)
            if isinstance(call, cst.Call) and len(call.args) == 1:
                callee = self.context.names.callee(call)
                for reduction, qualified in _REDUCTIONS.items():
                    if callee == qualified:
                        return reduction, call
        return None, None

    def _mask_of(self, mask: cst.BaseExpression, x: cst.Name, seen: frozenset) -> bool:
        """Whether `mask` is computed elementwise from `x` and scalars, so that it has `x`'s shape."""
        if isinstance(mask, cst.Comparison):
            operands = [mask.left, *(c.comparator for c in mask.comparisons)]
            if any(not isinstance(c.operator, _COMPARE) for c in mask.comparisons):
                return False
            return any(self._same(o, x) for o in operands) and all(
                self._same(o, x) or self._scalar(o) for o in operands
            )
        if isinstance(mask, cst.BinaryOperation) and isinstance(mask.operator, _BITWISE):
            return self._mask_of(mask.left, x, seen) and self._mask_of(mask.right, x, seen)
        if isinstance(mask, cst.UnaryOperation) and isinstance(mask.operator, cst.BitInvert):
            return self._mask_of(mask.expression, x, seen)
        if isinstance(mask, cst.Call) and not any(a.keyword or a.star for a in mask.args):
            callee = self.context.names.callee(mask)
            if callee in _ELEMENTWISE_TESTS and len(mask.args) == 1:
                return self._same(mask.args[0].value, x)
            if callee == "jax.numpy.logical_not" and len(mask.args) == 1:
                return self._mask_of(mask.args[0].value, x, seen)
            if callee in _LOGICAL and len(mask.args) == 2:
                return all(self._mask_of(a.value, x, seen) for a in mask.args)
            return False
        if isinstance(mask, cst.Name) and mask.value not in seen:
            value = self._single_value(mask)
            return value is not None and self._mask_of(value, x, seen | {mask.value})
        return False

    def _same(self, expr: cst.BaseExpression, x: cst.Name) -> bool:
        """`expr` is the name `x`, bound once in its scope (so both uses read the same array)."""
        if not (isinstance(expr, cst.Name) and expr.value == x.value):
            return False
        scope = self._scope(x)
        return scope is not None and scope is self._scope(expr) and len(scope.assignments[x.value]) == 1

    def _scalar(self, expr: cst.BaseExpression) -> bool:
        if is_number(expr):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return is_number(expr.expression)
        return self.context.shapes.rank(expr) == 0

    def _single_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of `name = value` when that is the name's only binding in its scope."""
        scope = self._scope(name)
        if scope is None:
            return None
        assignments = list(scope.assignments[name.value])
        if len(assignments) != 1:
            return None
        node = assignments[0].node
        parent = self.context.parents.get(node)
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            assign = self.context.parents.get(parent)
            if isinstance(assign, cst.Assign) and len(assign.targets) == 1:
                return assign.value
        return None

    def _scope(self, node: cst.CSTNode):
        return self.context.wrapper.resolve(ScopeProvider).get(node)


_COMPARE = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)


def _is_at(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Attribute) and value.attr.value == "at"


def _bare(code, expr: cst.BaseExpression) -> str:
    return code(expr.with_changes(lpar=[], rpar=[])) if getattr(expr, "lpar", None) else code(expr)


# ---- the screen ------------------------------------------------------------------------------------------------
#
# `_traced_mask` ends, through `&`, `|`, `~`, `and`, `not` and names bound once, at PredicateAnalysis.boolean: a
# traced comparison, a call of `_BOOLEAN_CALLS` or `.all()`/`.any()` that is a tracer, or a name that is a tracer
# of dtype category BOOL. ShapeAnalysis.category gives BOOL only from a boolean seed in the expression or in the
# value or annotation of each binding of a name it reads: `True`/`False`, a comparison, a dtype spelled `bool`,
# `bool_` or `"bool"`, jaxtyping's `Bool[...]`, or a call of a boolean function (`jnp.isnan`, `jnp.logical_and`).
# A name mask also needs every binding of the name in the scope it reads (ScopeProvider's) to be an annotated
# parameter or `name = value` (ShapeAnalysis._per_binding, `_single_value`), each with such a seed.
_BOOLEAN_WORDS = frozenset({"bool", "bool_", "Bool", "True", "False", "all", "any"}) | frozenset(
    name.rsplit(".", 1)[-1] for name in _BOOLEAN_FUNCTIONS | _TO_BOOL
)
_MASK_OPERATORS = (ast.BitAnd, ast.BitOr, ast.BitXor)
_OK, _BAD, _UNKNOWN = "ok", "bad", "unknown"  # what one binding allows: a boolean, nothing, anything
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _may_mask_form(screen: Screen, expr: ast.expr, booleans: "_Booleans") -> bool:
    """`_may_mask` with a name matched against `booleans` (any scope) and no tracer test."""
    expr = _one_index(expr)
    kind = type(expr)
    if kind is ast.Name:
        return expr.id in booleans
    if kind is ast.BoolOp:
        return all(_may_mask_form(screen, value, booleans) for value in expr.values)
    if kind is ast.UnaryOp:
        return isinstance(expr.op, (ast.Not, ast.Invert)) and _may_mask_form(screen, expr.operand, booleans)
    if kind is ast.BinOp:
        return isinstance(expr.op, _MASK_OPERATORS) and all(
            _may_mask_form(screen, side, booleans) for side in (expr.left, expr.right)
        )
    if kind is ast.Call:
        func = expr.func
        return isinstance(func, ast.Attribute) and func.attr in _BOOLEAN_METHODS or screen.may_resolve_to(
            func, _BOOLEAN_FUNCTIONS
        )
    return kind is ast.Compare or _is_bool(expr)


def _may_mask(screen: Screen, expr: ast.expr, names: "_Names") -> bool:
    """Over-approximates `BooleanMask._traced_mask` (with PredicateAnalysis.boolean) on an `ast` expression."""
    expr = _one_index(expr)
    if isinstance(expr, ast.Name):
        # PredicateAnalysis.boolean: a tracer of category BOOL; or `_single_value`: bound once, in the scope it
        # is read in, to a mask (equinox's `filter_spec: PyTree[AxisSpec]`, a module-level type, is neither)
        return names.may_be_boolean(expr) and (
            may_be_tracer_strict(screen, expr) or names.may_be_bound_to(expr, lambda v: _may_mask(screen, v, names))
        )
    if isinstance(expr, ast.BoolOp):
        return all(_may_mask(screen, value, names) for value in expr.values)
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, (ast.Not, ast.Invert)) and _may_mask(screen, expr.operand, names)
    if isinstance(expr, ast.BinOp):
        return isinstance(expr.op, _MASK_OPERATORS) and all(
            _may_mask(screen, side, names) for side in (expr.left, expr.right)
        )
    if isinstance(expr, ast.Call):
        func = expr.func
        boolean = isinstance(func, ast.Attribute) and func.attr in _BOOLEAN_METHODS
        return (boolean or screen.may_resolve_to(func, _BOOLEAN_FUNCTIONS)) and may_be_tracer_strict(screen, expr)
    if isinstance(expr, ast.Compare):
        return may_be_tracer_strict(screen, expr)
    return False  # `True` (a cst.Name) is never a tracer, nor a name bound to a mask


class _Names:
    """Per scope (module, def, lambda, class), what each binding of each name allows: `_OK` (an annotated
    parameter or `name = value` with a boolean seed), `_BAD` (a binding that ShapeAnalysis._per_binding and
    `_single_value` reject, or a parameter without a seed), `_UNKNOWN` (a form left unjudged), or for a seedless
    `name = value` its scope and the names its value reads (it allows a boolean if one of them may be one where
    it is read: optax's `j = remaining[it]` with `remaining` unpacked from a parameter does not, whatever other
    functions bind to `remaining`; with a lambda or comprehension in the value, one of them by name, any scope);
    and the scope of each name read."""

    def __init__(self, screen: Screen, words: frozenset[str], booleans: "_Booleans") -> None:
        self._words = words
        self.booleans = booleans
        self._screen = screen
        self._builtins = _unshadowed_builtins(screen)
        self._bindings: dict[int, dict[str, list]] = {}  # scope: name: [verdict or (scope, names) that decide it]
        self._declared: dict[int, set[str]] = {}  # scope: its `global`/`nonlocal` names
        self._parent: dict[int, ast.AST | None] = {}  # scope: the scope its names resolve in next (classes skipped)
        self.scope_of: dict[int, ast.AST] = {}  # id(name): the scope it is read in
        self._known: dict[tuple[int, str], bool] = {}  # (scope, name): whether it may be a boolean there
        self._values: dict[tuple[int, str], list[ast.expr]] = {}  # (scope, name): the values of its `name = value`
        self._judging: set[tuple[int, str]] = set()  # the (scope, name) whose values `may_be_bound_to` is asking
        self._visit_scope(screen.tree, None)
        self._anywhere_declared = {name for names in self._declared.values() for name in names}

    def may_be_boolean(self, name: ast.Name) -> bool:
        return self._in_scope(name.id, self.scope_of.get(id(name)))

    def may_be_bound_to(self, name: ast.Name, may_mask: Callable[[ast.expr], bool]) -> bool:
        """Over-approximates `BooleanMask._single_value` then `_traced_mask`: some `name = value` in the scope the
        name is read in (LibCST's scope.assignments: that scope's own, never the scopes around it) whose value
        `may_mask`. A name that some `global` or `nonlocal` declares may take its bindings from another scope:
        anything goes. A cycle (`a = b`, `b = a`) may."""
        if name.id in self._anywhere_declared:
            return True
        key = (id(self.scope_of.get(id(name))), name.id)
        if key in self._judging:
            return True
        self._judging.add(key)
        try:
            return any(may_mask(value) for value in self._values.get(key, ()))
        finally:
            self._judging.discard(key)

    def _in_scope(self, name: str, scope: ast.AST | None) -> bool:
        """Whether `name`, read in `scope`, may be a boolean: each binding of it in the scope that owns it allows
        one. Memoized; a name met again while it is being judged (a cycle) may."""
        key = (id(scope), name)
        known = self._known.get(key)
        if known is not None:
            return known
        self._known[key] = True
        found = False
        while scope is not None:  # a class body's names too: its own bindings, then the scopes around it
            if name in self._declared.get(id(scope), ()):
                found = True
                break
            bound = self._bindings.get(id(scope), {}).get(name)
            if bound is not None:
                found = all(self._allows(binding) for binding in bound)
                break
            scope = self._parent[id(scope)]
        # else: bound nowhere, a builtin or a star import, which neither analysis resolves
        self._known[key] = found
        return found

    def _allows(self, binding) -> bool:
        if binding is _BAD:
            return False
        if binding is _OK or binding is _UNKNOWN:
            return True
        scope, read = binding  # a seedless `name = value`: the scope it binds in and the names its value reads
        if scope is None:  # a value with a lambda or comprehension: names of their own scopes, matched by name
            return any(name in self.booleans for name in read)
        # ShapeAnalysis.category and `_single_value` read each name where it stands, through its scope's bindings
        return any(self._in_scope(name, scope) for name in read)

    # ---- collection ----------------------------------------------------------------------------------------

    def _visit_scope(self, scope: ast.AST, parent: ast.AST | None) -> None:
        self._bindings[id(scope)] = {}
        self._parent[id(scope)] = parent
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = scope.args
            params = (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg)
            for param in params:
                if param is not None:
                    seeded = param.annotation is not None and _seed(param.annotation, self._words) is None
                    self._bind(scope, param.arg, _OK if seeded else _BAD)
            body = [scope.body] if isinstance(scope, ast.Lambda) else scope.body
        else:
            body = scope.body
        # names in a class body's functions resolve past the class
        inner_parent = parent if isinstance(scope, ast.ClassDef) else scope
        for node in body:
            self._visit(node, scope, inner_parent)

    def _visit(self, node: ast.AST, scope: ast.AST, inner_parent: ast.AST | None) -> None:
        kind = type(node)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            self._bind(scope, node.name, _BAD)
            outer = [*node.decorator_list]
            if kind is ast.ClassDef:
                outer += [*node.bases, *node.keywords]
            else:
                arguments = node.args
                outer += [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
                outer += [p.annotation for p in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                                 arguments.vararg, arguments.kwarg) if p is not None and p.annotation]
                if node.returns is not None:
                    outer.append(node.returns)
            for child in outer:
                self._visit(child, scope, inner_parent)
            self._visit_scope(node, inner_parent)
            return
        if kind is ast.Lambda:
            arguments = node.args
            for child in (*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)):
                self._visit(child, scope, inner_parent)
            self._visit_scope(node, inner_parent)
            return
        if kind is ast.Assign:
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                self._values.setdefault((id(scope), name), []).append(node.value)
                if not _may_be_boolean_form(self._screen, node.value, self._builtins):
                    self._bind(scope, name, _BAD)
                elif (read := _seed(node.value, self._words)) is None:
                    self._bind(scope, name, _OK)
                else:  # a seedless value: judged by what it reads, there
                    nested = any(isinstance(n, (ast.Lambda, *_COMPREHENSIONS)) for n in ast.walk(node.value))
                    self._bind(scope, name, (None if nested else scope, read))
            else:
                for target in node.targets:
                    for inner in ast.walk(target):
                        if type(inner) is ast.Name and type(inner.ctx) is ast.Store:
                            self._bind(scope, inner.id, _BAD)
        elif kind is ast.AnnAssign:
            if isinstance(node.target, ast.Name):
                self._bind(scope, node.target.id, _BAD if node.value is not None else _UNKNOWN)
        elif kind in (ast.For, ast.AsyncFor):
            for inner in ast.walk(node.target):
                if type(inner) is ast.Name and type(inner.ctx) is ast.Store:
                    self._bind(scope, inner.id, _BAD)
        elif kind in (ast.With, ast.AsyncWith):
            for item in node.items:
                for inner in ast.walk(item.optional_vars) if item.optional_vars is not None else ():
                    if type(inner) is ast.Name and type(inner.ctx) is ast.Store:
                        self._bind(scope, inner.id, _BAD)
        elif kind in (ast.Import, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    self._bind(scope, (alias.asname or alias.name).split(".")[0], _BAD)
        elif kind in (ast.Global, ast.Nonlocal):
            self._declared.setdefault(id(scope), set()).update(node.names)
        elif kind in (ast.AugAssign, ast.NamedExpr):
            if isinstance(node.target, ast.Name):
                self._bind(scope, node.target.id, _UNKNOWN)
        elif kind is ast.ExceptHandler:
            if node.name:
                self._bind(scope, node.name, _UNKNOWN)
        elif kind is ast.Name:
            self.scope_of[id(node)] = scope
        for child in ast_children(node):  # no expression context: nothing to record there
            self._visit(child, scope, inner_parent)

    def _bind(self, scope: ast.AST, name: str, verdict) -> None:
        self._bindings[id(scope)].setdefault(name, []).append(verdict)



def _words(screen: Screen) -> frozenset[str]:
    """`_BOOLEAN_WORDS` and the local names that imports bind to one of them (`from jax.numpy import isnan as f`)."""
    local = {name for name, full in screen.imports.items() if any(f.rsplit(".", 1)[-1] in _BOOLEAN_WORDS for f in full)}
    return _BOOLEAN_WORDS | local


def _may_be_boolean_form(screen: Screen, value: ast.expr, builtins: frozenset[str]) -> bool:
    """Whether a value's form lets it be a mask: of category BOOL for ShapeAnalysis.category, or a mask for
    `BooleanMask._traced_mask` through `_single_value`. Arithmetic other than `&`/`|`/`^`, attributes other than
    `.T`, `x.shape[i]`, containers, strings and numbers are never either; nor a builtin's result other than
    `bool(x)`'s, nor a call `may_be_boolean_call` rules out: a same-module function's (`get_random_coordinate(k)`),
    `jnp.argmax(x)`'s, `jnp.where(c, a, b)`'s where `a` or `b` cannot be (`jnp.where(t == GOAL, 0, 2)`)."""
    may = lambda e: _may_be_boolean_form(screen, e, builtins)  # noqa: E731
    kind = type(value)
    if kind is ast.Constant:
        return isinstance(value.value, bool)
    if kind in (ast.Name, ast.Compare, ast.BoolOp):
        return True
    if kind is ast.UnaryOp:
        return not isinstance(value.op, ast.USub) and may(value.operand)
    if kind is ast.BinOp:
        return isinstance(value.op, _MASK_OPERATORS) and may(value.left) and may(value.right)
    if kind is ast.IfExp:
        return may(value.body) and may(value.orelse)
    if kind is ast.Subscript:
        base = value.value
        return not (isinstance(base, ast.Attribute) and base.attr == "shape") and may(base)
    if kind is ast.Attribute:
        return value.attr in ("T", "mT") and may(value.value)
    if kind is ast.Call:
        func = value.func
        if any(k.arg in (None, "dtype") for k in value.keywords) or any(isinstance(a, ast.Starred) for a in value.args):
            return True  # `jnp.asarray(x, dtype=bool)`, `f(*args)`
        if isinstance(func, ast.Name) and func.id in builtins:
            return func.id == "bool"
        return may_be_boolean_call(screen, value, may)
    return kind is ast.NamedExpr


_BUILTIN_NAMES = frozenset(dir(builtins))


def _unshadowed_builtins(screen: Screen) -> frozenset[str]:
    """The builtins' names that nothing in the module binds (no import, assignment, def or parameter)."""
    return _BUILTIN_NAMES - screen.imports.keys() - other_bindings(screen)


def _seed(value: ast.AST, words: frozenset[str]) -> tuple[str, ...] | None:
    """None when `value` holds a boolean seed; else the names it reads (whose being boolean may make it one)."""
    read = []
    for inner in ast.walk(value):
        kind = type(inner)
        if kind is ast.Name:
            if inner.id in words:
                return None
            read.append(inner.id)
        elif kind is ast.Attribute:
            if inner.attr in words:
                return None
        elif kind is ast.Compare:
            return None
        elif kind is ast.Constant and (isinstance(inner.value, bool) or inner.value in ("bool", "bool_")):
            return None
    return tuple(read)


class _Booleans:
    """The names some annotated parameter or `name = value` of which, in any scope, holds a seed or reads such a
    name: a superset of those ShapeAnalysis may give category BOOL, and of those bound once to a mask. Solved
    per name asked, from the values that bind it."""

    def __init__(self, screen: Screen, words: frozenset[str]) -> None:
        self._words = words
        self._values: dict[str, list[ast.AST]] = {}  # name: the values (annotations) of its plain bindings
        for node in screen.nodes_in_order(ast.Assign, ast.arg):
            if type(node) is ast.Assign:
                if len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                    self._values.setdefault(node.targets[0].id, []).append(node.value)
            elif node.annotation is not None:
                self._values.setdefault(node.arg, []).append(node.annotation)
        self._known: dict[str, bool] = {}

    def __contains__(self, name: str) -> bool:
        known = self._known.get(name)
        if known is not None:
            return known
        seen, todo = {name}, [name]
        while todo:
            for value in self._values.get(todo.pop(), ()):
                read = _seed(value, self._words)
                if read is None:
                    self._known[name] = True
                    return True
                for other in read:
                    if other not in seen and self._known.get(other) is not False:
                        seen.add(other)
                        todo.append(other)
        for other in seen:  # none of them reaches a seed
            self._known[other] = False
        return False


def _one_index(expr: ast.expr) -> ast.expr:
    """`m` for the index of `x[m,]`, which LibCST reads as one subscript element `m` (and `ast` as a tuple)."""
    if type(expr) is ast.Tuple and len(expr.elts) == 1:
        return expr.elts[0]
    return expr


def _is_bool(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and isinstance(expr.value, bool)
