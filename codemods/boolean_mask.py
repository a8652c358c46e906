"""JF801 boolean-mask-in-traced: `x[mask]` with a traced boolean mask has a data-dependent shape, which jit
cannot stage; a masked sum or mean keeps the shape and becomes `jnp.where`/`where=`."""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.screen import Screen, traced_nodes
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
    Safe. The original cannot run under the transformation at all; run eagerly it gives the values the
    rewrite gives under jit, in the same dtype (checked for float, bfloat16, int8, uint8, int32, bool and
    complex inputs: `jnp.where(mask, x, 0)` keeps `x`'s dtype, the 0 being weakly typed, and the sum promotes
    small integers and booleans as the original sum does). An empty mask gives 0 for the sum and NaN for the
    mean on both sides. A float sum may round differently in the last place, since the zeros change how the
    reduction pairs its terms. The fix is offered only when the mask is built elementwise from `x` itself and
    scalars (`x > 0`, `(x > a) & (x < b)`, `~jnp.isnan(x)`, or a name bound once to one of these, with `x`
    bound once), so that it has `x`'s shape: `jnp.where` would otherwise broadcast, where indexing selects
    rows.

    ## When it stays quiet
    Masks that are not proven traced booleans (a NumPy mask, `x[idx]` with integer indices, a static
    configuration), code that no staging transformation traces (plain Python, NumPy, or a function only
    `jax.grad` reaches, which runs eagerly and accepts boolean indices), and assignments `x[mask] = v`.
    Reductions with arguments (`x[mask].sum(axis=0)`) and masks of another array are reported, not rewritten.
    """

    code = "JF801"
    name = "boolean-mask-in-traced"
    summary = f"x[mask] with a traced boolean mask ({ERROR}): masked sum/mean via jnp.where"
    fix_safety = Safety.SAFE
    screen = ("[",)

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs, in code that may be traced, a subscript whose index may be a tracer (a name may be
        bound to one)."""
        return any(
            isinstance(node.slice, ast.Name) or screen.may_be_tracer(node.slice)
            for node in traced_nodes(screen, ast.Subscript)
        )

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
            f"{prefix}; `{text}` computes the same {reduction} at a fixed shape",
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
