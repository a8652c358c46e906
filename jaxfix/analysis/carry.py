"""What stops a loop's carried values from becoming the carry of `lax.fori_loop`, `lax.scan` or
`lax.while_loop`.

A lax loop traces its body once, with abstract values of fixed shape and dtype, so every carried value must
be traced (or a Python number that the loop turns into a traced one), must start defined, and must keep its
rank, shape and dtype from one step to the next. A Python loop promises none of this. `CarryAnalysis.blocker`
proves each condition from the code, or says in words which one it could not prove.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import libcst as cst

from jaxfix.analysis.dataflow import UNDEFINED, LoopFlow, Parameter
from jaxfix.analysis.shapes import Category, annotation_category, annotation_rank
from jaxfix.analysis.syntax import body_statements, is_none, is_number, target_names
from jaxfix.analysis.traced import Kind
from jaxfix.facts.model import ModuleModel

Loop = cst.For | cst.While

_BINARY_FOR_AUGMENTED = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide,
    cst.FloorDivideAssign: cst.FloorDivide,
    cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
    cst.BitAndAssign: cst.BitAnd,
    cst.BitOrAssign: cst.BitOr,
    cst.BitXorAssign: cst.BitXor,
}
_NUMBER_SHAPE = (
    "`{name}` starts as a Python number and cannot be proven to stay a scalar in the loop "
    "(start it as an array of its in-loop shape)"
)
_NUMBER_SHAPE_HEAD = re.compile(r"^`(\w+)` starts as a Python number and cannot be proven to stay a scalar")


def number_start(reason: str) -> str | None:
    """The carried name a `blocker` reason is about when the reason is that the name starts as a Python number
    whose in-loop shape is unproven (the user can start it as an array of that shape); None otherwise."""
    found = _NUMBER_SHAPE_HEAD.match(reason)
    return found.group(1) if found else None


@dataclass(frozen=True)
class Slot:
    """What the loop itself binds in its body (the index of a `range`, the row of `for x in xs`): a rank and
    a dtype category, None where unknown."""

    rank: int | None
    category: Category | None = None


class CarryAnalysis:
    def __init__(self, context: ModuleModel) -> None:
        self._context = context

    def name_kind(self, loop: Loop, name: str) -> Kind:
        """Whether `name`, as the loop body first mentions it, is traced."""
        occurrence = _first_occurrence(loop.body, name)
        return self._context.traced.kind(occurrence) if occurrence is not None else Kind.UNKNOWN

    def blocker(
        self,
        loop: Loop,
        flow: LoopFlow,
        *,
        construct: str,
        bound: dict[str, Slot] | None = None,
        restartable: set[str] | None = None,
    ) -> str | None:
        """Why the carried values of `loop` cannot be a lax loop's carry, or None when they can. `construct`
        names the lax loop in messages; `bound` describes the names the loop binds in its body.

        `restartable`, when given, collects the carried names that start as a Python number (`gae = 0.0`) whose
        shape after one step is unproven or not a scalar, instead of blocking on them: the caller then starts
        the lax loop from the first step's shape (`jnp.zeros_like(jax.eval_shape(step, gae, x)[0])`)."""
        bound = bound or {}
        context = self._context
        dataflow = context.dataflow
        traced = context.traced
        shapes = context.shapes
        function_flow = dataflow.flow(dataflow.enclosing_function(loop))
        function = traced.enclosing_function(loop)
        numbers: list[str] = []
        init_rank: dict[str, int | None] = {}
        init_category: dict[str, Category | None] = {}
        only_numbers: set[str] = set()  # every binding that reaches the loop is a Python number
        if flow.declared:
            return f"`{flow.declared[0]}` is declared global or nonlocal"
        if flow.undefined:
            return f"`{flow.undefined[0]}` is carried from one step to the next but not defined before the loop"
        captured = dataflow.captured_carries(flow)
        if captured:
            return (
                f"`{captured[0]}` is carried and read by a function defined outside the loop, which would keep "
                f"seeing its value from before the loop once the body is a function of its own"
            )
        for name in flow.carried:
            sources = function_flow.reaching(loop, name)
            if not sources:
                return f"`{name}` has no binding that reaches the loop"
            ranks, categories = set(), set()
            if all(isinstance(s, cst.BaseExpression) and is_number(s) and not isinstance(s, cst.Name) for s in sources):
                only_numbers.add(name)
            for source in sorted(sources, key=self._source_order):
                if source is UNDEFINED:
                    return f"`{name}` may be undefined when the loop starts"
                if isinstance(source, Parameter):
                    if function is None or traced.param_kind(function, name) is not Kind.TRACED:
                        return f"`{name}` is a parameter that is not known to be traced"
                    ranks.add(annotation_rank(source.param))
                    categories.add(annotation_category(source.param))
                    continue
                if isinstance(source, cst.AugAssign):
                    if traced.kind(source.value) is not Kind.TRACED:
                        return f"`{name}` is updated from static values before the loop"
                    ranks.add(None)
                    categories.add(None)
                    continue
                if isinstance(source, cst.Assign):  # a, b = ...
                    value = unpacked(source, name)
                    if value is None:
                        if traced.kind(source.value) is not Kind.TRACED:
                            return f"`{name}` starts as a value that is not known to be traced"
                        ranks.add(None)
                        categories.add(None)
                        continue
                    source = value
                if not isinstance(source, cst.BaseExpression):
                    return f"`{name}` is bound by a `{type(source).__name__.lower()}` statement before the loop"
                if is_none(source):
                    return f"`{name}` starts as None"
                if is_number(source):
                    if isinstance(source, cst.Name):  # True, False
                        return f"`{name}` starts as a Python bool, which {construct} does not promote"
                    numbers.append(name)
                    ranks.add(0)
                    categories.add(None)  # weakly typed: JAX promotes it to the loop's dtype
                    continue
                kind = traced.kind(source)
                if kind is not Kind.TRACED:
                    what = "static" if kind is Kind.STATIC else "not known to be traced"
                    return f"`{name}` starts as a {what} value (`{snippet(context.code_for(source))}`)"
                ranks.add(shapes.rank(source))
                categories.add(shapes.category(source))
            init_rank[name] = ranks.pop() if len(ranks) == 1 else None
            init_category[name] = categories.pop() if len(categories) == 1 else None
        updates = {name: self.updates(loop, name) for name in flow.carried}
        # Python numbers must become traced in the loop, or the rewrite would turn a trace-time constant into
        # a traced int32 (wrapping on overflow, unusable as a shape).
        static = self._still_static(numbers, updates, function)
        if static:
            name = sorted(static, key=list(flow.carried).index)[0]
            return f"`{name}` stays a Python number in the loop"
        for name in flow.carried:
            kind = self.name_kind(loop, name)
            if kind is not Kind.TRACED:
                return f"`{name}` is carried but not known to be traced"
        # Shapes and dtypes.
        ranks = {name: rank for name, rank in init_rank.items() if rank is not None}
        ranks.update({name: slot.rank for name, slot in bound.items()})
        categories = {name: category for name, category in init_category.items() if category is not None}
        categories.update({name: slot.category for name, slot in bound.items()})
        for name in flow.carried:
            for value in updates[name]:
                if value is None:
                    if name in numbers:
                        if restartable is None or name not in only_numbers:
                            return _NUMBER_SHAPE.format(name=name)
                        restartable.add(name)
                    continue
                if isinstance(value, (cst.Tuple, cst.List, cst.Dict, cst.Set)):
                    return f"`{name}` becomes a Python {type(value).__name__.lower()} in the loop"
                reshaping = shapes.reshaping(value, name)
                if reshaping is not None:
                    return (
                        f"`{name}` may change shape from one step to the next (`{reshaping}`), and {construct} "
                        "needs a fixed shape"
                    )
                rank = shapes.rank(value, ranks)
                if name in numbers and rank != 0:
                    if restartable is None or name not in only_numbers:
                        return _NUMBER_SHAPE.format(name=name)
                    restartable.add(name)
                    continue
                if rank is not None and init_rank.get(name) is not None and rank != init_rank[name]:
                    return f"`{name}` changes rank from {init_rank[name]} to {rank} in the loop"
                before = init_category.get(name)
                exact = shapes.category(value, categories)
                after = exact if exact is not None else shapes.least_category(value, categories)
                changes = after != before if exact is not None else after is not None and before is not None and after > before
                if before is not None and after is not None and changes:
                    return (
                        f"`{name}` changes dtype from {before.name.lower()} to {after.name.lower()} in the loop "
                        f"(`{snippet(context.code_for(value))}`), and {construct} needs a fixed dtype; start it as "
                        f"{after.name.lower()} before the loop"
                    )
        return None

    def _source_order(self, source) -> tuple:
        """Reaching definitions in a fixed order (facts/carry.py's): an unbound path, a parameter, then bindings in
        source order; the first that blocks names the reason."""
        if source is UNDEFINED:
            return (0, 0, 0)
        if isinstance(source, Parameter):
            return (1, 0, 0)
        start = self._context.positions[source].start
        return (2, start.line, start.column)

    def _still_static(self, numbers: Sequence[str], updates, function) -> set[str]:
        """Those of `numbers` that no update makes traced, assuming the others stay static too."""
        static = set(numbers)
        changed = True
        while changed:
            changed = False
            for name in list(static):
                assumed = {other: Kind.STATIC for other in static}
                values = [value for value in updates[name] if value is not None]
                if any(self.kind_assuming(value, function, assumed) is Kind.TRACED for value in values):
                    static.discard(name)
                    changed = True
        return static

    def updates(self, loop: Loop, name: str) -> list[cst.BaseExpression | None]:
        """The values assigned to `name` in the loop body (None: an assignment whose value is not one
        expression of its own, like `a, b = f(x)`); `x += v` gives `x + v`."""
        found: list[cst.BaseExpression | None] = []

        class Finder(cst.CSTVisitor):
            def visit_Assign(self, node: cst.Assign) -> None:
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        if target.target.value == name:
                            found.append(node.value)
                    elif name in target_names(target.target):
                        found.append(unpacked(node, name))

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                if isinstance(node.target, cst.Name) and node.target.value == name:
                    operator = _BINARY_FOR_AUGMENTED.get(type(node.operator))
                    if operator is None:
                        found.append(None)
                    else:
                        found.append(cst.BinaryOperation(cst.Name(name), operator(), node.value))

            def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
                if isinstance(node.target, cst.Name) and node.target.value == name and node.value is not None:
                    found.append(node.value)

            def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
                if name in target_names(node.target):
                    found.append(None)

            def visit_For(self, node: cst.For) -> None:
                if name in target_names(node.target):
                    found.append(None)

            def visit_Lambda(self, node: cst.Lambda) -> bool:
                return False

        for stmt in body_statements(loop.body):
            stmt.visit(Finder())
        return found

    def kind_assuming(self, expr: cst.BaseExpression, function, assumed: dict[str, Kind]) -> Kind:
        """The kind of `expr` in `function` if the `assumed` names had those kinds."""
        if isinstance(expr, cst.BinaryOperation) and expr not in self._context.parents:  # from `x += v`
            left = self.kind_assuming(expr.left, function, assumed)
            return max(left, self.kind_assuming(expr.right, function, assumed))
        if isinstance(expr, cst.Name) and expr.value in assumed:
            return assumed[expr.value]
        return self._context.traced.kind(expr, within=function, assume=assumed)


def unpacked(assign: cst.Assign, name: str) -> cst.BaseExpression | None:
    """The element of `a, b = x, y` bound to `name`, when the value is a display of the same length."""
    if len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    value = assign.value
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)):
        return None
    if len(target.elements) != len(value.elements):
        return None
    for t, v in zip(target.elements, value.elements):
        if isinstance(t.value, cst.Name) and t.value.value == name and not isinstance(v, cst.StarredElement):
            return v.value
    return None


def _first_occurrence(node: cst.CSTNode, name: str) -> cst.Name | None:
    found: list[cst.Name] = []

    class Finder(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> bool:
            if node.value == name and not found:
                found.append(node)
            return not found

    node.visit(Finder())
    return found[0] if found else None


def snippet(text: str, limit: int = 50) -> str:
    """`text` on one line, cut to `limit` characters, for a message."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__: Sequence[str] = ("CarryAnalysis", "Slot", "number_start", "unpacked", "snippet")
