"""Whether a truth test in traced code surely fails, asked of LibCST nodes (the branch rules still run on LibCST).

Which values are surely tracers, and surely arrays, is a fact on `ast` in jaxfix/facts/predicates.py
(`Predicates`: tracers proven from the code, flow-sensitively; array evidence). This adapter maps each LibCST node
to its `ast` node through jaxfix/edit/bridge.py (the traced adapter's) and asks the fact; `test`, which reads it, stay here until the branch rules move (`test` on `ast` is `Predicates.truth`, which the agreement
family truth-exact compares with it: a rule asks `test` of LibCST's nested `and`/`or` pairs too, which `ast` holds
as one node).

A truth test (`if t:`, `while t:`, `not t`, `t and u`) surely fails when its value is a tracer. A bare name,
attribute or subscript needs one more fact, since the truth of a tuple or a dict is a Python bool: evidence
that it holds an array. So does `a == b`, which compares tuples and dicts by structure, unless the other side is
a number (`Predicates.traced_comparison`).
"""

from __future__ import annotations

import libcst as cst

from jaxfix.facts.knowledge.jax import NOT_ONE_ARRAY as _NOT_ONE_ARRAY  # noqa: F401 (the screen's)
from jaxfix.facts.knowledge.jax import NOT_ONE_ARRAY_PREFIXES as _NOT_ONE_ARRAY_PREFIXES  # noqa: F401 (the screen's)
from jaxfix.facts.model import ModuleModel
from jaxfix.facts.predicates import Predicates, Truth  # noqa: F401 (Truth: read from here by the branch rules)


class PredicateAnalysis:
    def __init__(self, context: ModuleModel) -> None:
        self._context = context
        self._names = context.names
        self.fact: Predicates = context.facts.predicates  # one per module: the `check`-rules ask it too

    def _ast_of(self, node: cst.CSTNode):
        return self._context.traced._ast_of(node)

    # ---- queries -------------------------------------------------------------------------------------------

    def tracer(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` surely evaluates to a traced JAX array where it stands (`Predicates.tracer`)."""
        node = self._ast_of(expr)
        return node is not None and self.fact.tracer(node)

    def traced_tree(self, expr: cst.BaseExpression) -> bool:
        """Whether every leaf of `expr`'s value is surely a tracer where it stands (`Predicates.traced_tree`)."""
        node = self._ast_of(expr)
        return node is not None and self.fact.traced_tree(node)

    def static_suspect(self, expr: cst.BaseExpression) -> str | None:
        """Why `expr` may well be a Python value at trace time (`Predicates.static_suspect`)."""
        node = self._ast_of(expr)
        return self.fact.static_suspect(node) if node is not None else None

    def array_evidence(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` is surely an array rather than a container of arrays (`Predicates.array_evidence`)."""
        node = self._ast_of(expr)
        return node is not None and self.fact.array_evidence(node)

    def _traced_comparison(self, expr: cst.Comparison) -> bool:
        node = self._ast_of(expr)
        return node is not None and self.fact.traced_comparison(node)

    def test(self, expr: cst.BaseExpression) -> Truth:
        """What `if expr:` (or `while`, `not`, `and`/`or`) does under tracing: see `Truth`."""
        if isinstance(expr, cst.BooleanOperation):
            parts = [self.test(part) for part in (expr.left, expr.right)]
            if all(part is Truth.TRACED for part in parts):
                return Truth.TRACED
            # Python evaluates the left operand first: if it is a tracer, the test fails whatever follows.
            return Truth.MIXED if parts[0] is not Truth.OTHER else Truth.OTHER
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return self.test(expr.expression)
        if isinstance(expr, cst.Comparison):
            return Truth.TRACED if self._traced_comparison(expr) else Truth.OTHER
        if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
            return Truth.TRACED if self.tracer(expr) and self.array_evidence(expr) else Truth.OTHER
        return Truth.TRACED if self.tracer(expr) else Truth.OTHER
