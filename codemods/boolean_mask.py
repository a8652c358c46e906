"""JF801 boolean-mask-in-traced: `x[mask]` with a traced boolean mask has a data-dependent shape, which jit
cannot stage; a masked sum or mean keeps the shape and becomes `jnp.where`/`where=`."""

from __future__ import annotations

import ast

import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety
from jaxfix.facts.knowledge.jax import LOGICAL_BINARY, SHAPE_KEEPING_TESTS
from jaxfix.facts.literals import is_number
from jaxfix.facts.module import FileFacts

ERROR = "NonConcreteBooleanIndexError"
QUOTE = f"{ERROR}: Array boolean indices must be concrete"
_REDUCTIONS = {"sum": "jax.numpy.sum", "mean": "jax.numpy.mean"}
_BITWISE = (ast.BitAnd, ast.BitOr, ast.BitXor)
_COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


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

    looks_at = ("Subscript",)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each subscript read in a function that a staging transformation traces whose one index is a traced
        boolean mask (`Predicates.boolean`, their `&`/`|`/`^`/`~`, a name bound once to one): `x.at[mask]`, a
        masked sum or mean (fixed where the mask has the shape of `x`), or any other use."""
        checking = _Check(cls, facts)
        return [found for node in facts.binder.nodes_of(ast.Subscript) if (found := checking.subscript(node)) is not None]

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The reduction's call replaced by the text `check` wrote into the message, with the call's parentheses."""
        call, text, module = finding.plan
        node = bridge.cst_of(call)
        if not isinstance(node, cst.Call):
            return None
        new = cst.parse_expression(text).with_changes(lpar=node.lpar, rpar=node.rpar)
        imports = (ImportSpec(module),) if module is not None else ()
        return Fix(finding.fix.safety, finding.fix.description, ((node, new),), imports)


class _Check:
    """One module's subscripts judged: the mask, the reduction around it, whether the mask has `x`'s shape."""

    def __init__(self, rule: type[BooleanMask], facts: FileFacts) -> None:
        self.rule, self.facts = rule, facts
        self.binder = facts.binder
        self.positions = facts.positions

    def subscript(self, node: ast.Subscript) -> Diagnostic | None:
        mask = _index(self.positions, node)
        if mask is None:
            return None
        if _stored(node):
            return None
        parent = self.binder.parent(node)
        traced = self.facts.traced
        function = traced.enclosing_function(node)
        if function is None or not traced.is_traced(function) or not traced.staged(function):
            return None
        if not self._traced_mask(mask, frozenset()):
            return None
        code = self.positions.with_parentheses
        facts, rule = self.facts, self.rule
        shown, shown_mask = code(node, parent), code(mask, node)
        if _is_at(node.value):
            return rule.finding(
                facts, node,
                f"`{shown}` indexes with a traced boolean mask, which fails under jit ({QUOTE}); "
                f"`jnp.where({shown_mask}, new_value, {code(node.value.value, node.value)})` updates the masked "
                "elements without changing the shape",
            )  # fmt: skip
        reduction, call = self._reduction(node, parent)
        prefix = (
            f"`{shown}` has a data-dependent shape (as many elements as `{shown_mask}` has True), which fails "
            f"under jit ({QUOTE})"
        )
        if reduction is None:
            return rule.finding(
                facts, node,
                f"{prefix}; keep the shape: `jnp.where(mask, x, fill)`, a reduction with `where=mask`, or "
                "`jnp.nonzero(mask, size=k, fill_value=...)`",
            )  # fmt: skip
        if not (type(node.value) is ast.Name and self._mask_of(mask, node.value, frozenset())):
            return rule.finding(
                facts, call,
                f"{prefix}; `jnp.{reduction}(x, where=mask)` reduces without indexing, but not rewritten: the mask "
                f"is not proven to have the shape of `{code(node.value, node)}` (jnp.where would broadcast it)",
            )  # fmt: skip
        spelled, module = self.binder.spelling(_REDUCTIONS[reduction])
        jnp = spelled.rsplit(".", 1)[0]
        x, m = code(node.value, node), self.positions.segment(mask)
        if reduction == "sum":
            text = f"{jnp}.sum({jnp}.where({m}, {x}, 0))"
        else:
            text = f"{jnp}.mean({x}, where={m})"
        return rule.finding(
            facts, call,
            f"{prefix}; `{text}` computes the same {reduction} at a fixed shape; unsafe: a float {reduction} may "
            "round differently in the last bits",
            description=f"use {text}", plan=(call, text, module),
        )  # fmt: skip

    # ---- pieces --------------------------------------------------------------------------------------------

    def _traced_mask(self, mask: ast.expr, seen: frozenset) -> bool:
        """Whether `mask` surely is a traced boolean array: `Predicates.boolean`, their `&`, `|`, `^` and `~`, and
        a name bound once to one of these."""
        if self.facts.predicates.boolean(mask):
            return True
        kind = type(mask)
        if kind is ast.BinOp and isinstance(mask.op, _BITWISE):
            return self._traced_mask(mask.left, seen) and self._traced_mask(mask.right, seen)
        if kind is ast.UnaryOp and type(mask.op) is ast.Invert:
            return self._traced_mask(mask.operand, seen)
        if kind is ast.Name and mask.id not in seen:
            value = self._single_value(mask)
            return value is not None and self._traced_mask(value, seen | {mask.id})
        return False

    def _reduction(self, node: ast.Subscript, parent: ast.AST | None) -> tuple[str | None, ast.Call | None]:
        """`x[m].sum()` / `jnp.sum(x[m])` (and mean) with no other argument: the reduction and its call."""
        if type(parent) is ast.Attribute and parent.attr in _REDUCTIONS:
            call = self.binder.parent(parent)
            if type(call) is ast.Call and call.func is parent:
                return (parent.attr, call) if not call.args and not call.keywords else (None, None)
        if type(parent) is ast.Call and parent.func is not node and len(parent.args) == 1 and not parent.keywords:
            callee = self.binder.callee(parent)
            for reduction, qualified in _REDUCTIONS.items():
                if callee == qualified:
                    return reduction, parent
        return None, None

    def _mask_of(self, mask: ast.expr, x: ast.Name, seen: frozenset) -> bool:
        """Whether `mask` is computed elementwise from `x` and scalars, so that it has `x`'s shape."""
        kind = type(mask)
        if kind is ast.Compare:
            operands = [mask.left, *mask.comparators]
            if not all(isinstance(op, _COMPARE) for op in mask.ops):
                return False
            return any(self._same(o, x) for o in operands) and all(self._same(o, x) or self._scalar(o) for o in operands)
        if kind is ast.BinOp and isinstance(mask.op, _BITWISE):
            return self._mask_of(mask.left, x, seen) and self._mask_of(mask.right, x, seen)
        if kind is ast.UnaryOp and type(mask.op) is ast.Invert:
            return self._mask_of(mask.operand, x, seen)
        if kind is ast.Call and not mask.keywords and not any(type(a) is ast.Starred for a in mask.args):
            callee, args = self.binder.callee(mask), mask.args
            if callee in SHAPE_KEEPING_TESTS and len(args) == 1:
                return self._same(args[0], x)
            if callee == "jax.numpy.logical_not" and len(args) == 1:
                return self._mask_of(args[0], x, seen)
            if callee in LOGICAL_BINARY and len(args) == 2:
                return all(self._mask_of(a, x, seen) for a in args)
            return False
        if kind is ast.Name and mask.id not in seen:
            value = self._single_value(mask)
            return value is not None and self._mask_of(value, x, seen | {mask.id})
        return False

    def _same(self, expr: ast.expr, x: ast.Name) -> bool:
        """`expr` is the name `x`, bound once in its scope (so both uses read the same array)."""
        if not (type(expr) is ast.Name and expr.id == x.id):
            return False
        scope = self.binder.scope_of.get(x)
        return scope is not None and scope is self.binder.scope_of.get(expr) and len(scope.bindings.get(x.id, ())) == 1

    def _scalar(self, expr: ast.expr) -> bool:
        if is_number(expr):
            return True
        if type(expr) is ast.UnaryOp and isinstance(expr.op, (ast.USub, ast.UAdd)):
            return is_number(expr.operand)
        return self.facts.shapes.rank(expr) == 0

    def _single_value(self, name: ast.Name) -> ast.expr | None:
        """The value of `name = value` when that is the name's only binding in the scope it is read in (that
        scope's own bindings, as LibCST's `scope.assignments` gives them)."""
        scope = self.binder.scope_of.get(name)
        bindings = scope.bindings.get(name.id, ()) if scope is not None else ()
        if len(bindings) != 1:
            return None
        node = bindings[0].node
        assign = self.binder.parent(node) if type(node) is ast.Name else None
        if type(assign) is ast.Assign and len(assign.targets) == 1 and assign.targets[0] is node:
            return assign.value
        return None


def _index(positions, node: ast.Subscript) -> ast.expr | None:
    """The one index of `x[i]` (and of `x[i,]`, which LibCST reads as one element), not a slice or a star; None
    for `x[i, j]`, `x[a:b]`, `x[*i]`."""
    index = node.slice
    if type(index) is ast.Slice:
        return None
    if type(index) is ast.Tuple and not _parenthesized(positions, index):
        if len(index.elts) != 1 or type(index.elts[0]) is ast.Starred:
            return None
        return index.elts[0]
    return index


def _parenthesized(positions, tuple_: ast.Tuple) -> bool:
    """Whether a tuple has parentheses of its own (`x[(a, b)]`), not only its first element's (`x[(a), b]`):
    `ast` spans a tuple's own parentheses."""
    if not tuple_.elts:
        return True
    return not positions.segment(tuple_).startswith(positions.with_parentheses(tuple_.elts[0], tuple_))


def _stored(node: ast.Subscript) -> bool:
    """Whether the subscript is assigned or deleted (`x[m] = v`, `x[m] += v`, `for x[m] in ...`, `del x[m]`)."""
    return type(node.ctx) is not ast.Load


def _is_at(value: ast.expr) -> bool:
    return type(value) is ast.Attribute and value.attr == "at"
