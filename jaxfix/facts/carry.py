"""What stops a loop's carried values from becoming the carry of `lax.fori_loop`, `lax.scan` or
`lax.while_loop`, on `ast`: LibCST's `analysis.carry.CarryAnalysis` (which JF101, JF102, JF103 and the scan
rewrites read), answering the same messages (benchmarks/agreement.py `carry-exact` compares the two).

A lax loop traces its body once, with abstract values of fixed shape and dtype, so every carried value must
be traced (or a Python number that the loop turns into a traced one), must start defined, and must keep its
rank, shape and dtype from one step to the next. A Python loop promises none of this. `CarryAnalysis.blocker`
proves each condition from the code, or says in words which one it could not prove. Kinds are
`facts.traced`'s, the flow `facts.loops`'s; ranks, dtype categories and reshaping updates are asked of `values`
(an object with `rank(expr, env=None)`, `category(expr, env=None)`, `least_category(expr, env)` and
`reshaping(value, name)` over `ast` nodes).
"""

from __future__ import annotations

import ast
import re
import tokenize
from dataclasses import dataclass
from io import StringIO
from typing import Sequence

from jaxfix.facts.flow import children, target_names
from jaxfix.facts.literals import is_number
from jaxfix.facts.loops import UNDEFINED, LoopFlow, Parameter, captured_carries
from jaxfix.facts.predicates import _unpacked
from jaxfix.facts.shapes import Category, annotation_category, annotation_rank
from jaxfix.facts.spelling import spelled_names
from jaxfix.facts.traced import Kind


_OPERATORS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
}  # fmt: skip  (LibCST's `_BINARY_FOR_AUGMENTED`: `x <<= v` has no update value)
_NUMBER_SHAPE = (
    "`{name}` starts as a Python number and cannot be proven to stay a scalar in the loop "
    "(start it as an array of its in-loop shape)"
)
_NUMBER_SHAPE_HEAD = re.compile(r"^`(\w+)` starts as a Python number and cannot be proven to stay a scalar")
# LibCST's names of the statements that may bind a name before a loop (the type in "bound by a `...` statement")
_STATEMENT_NAMES = {ast.AsyncFor: "for", ast.AsyncWith: "with", ast.AsyncFunctionDef: "functiondef", ast.Delete: "del"}


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


class Update(ast.BinOp):
    """`x + v` for `x += v`: the value an augmented assignment gives, made here (no node of the module)."""

    def __init__(self, name: str, statement: ast.AugAssign) -> None:
        super().__init__(left=ast.Name(id=name, ctx=ast.Load()), op=statement.op, right=statement.value)
        self.statement = statement


class CarryAnalysis:
    """`facts`: the file's FileFacts (flow, traced, binder, positions); `values`: ranks and categories (above)."""

    def __init__(self, facts, values) -> None:
        self._facts = facts
        self._values = values
        self._names: list[tuple[int, int]] | None = None  # where each NAME token starts, (line, character)
        self._spelled: dict[str, list[tuple[int, int]]] | None = None

    # ---- kinds ---------------------------------------------------------------------------------------------------

    def name_kind(self, loop: ast.stmt, name: str) -> Kind:
        """Whether `name`, as the loop body first mentions it, is traced (LibCST's first `Name` of that spelling in
        the body: an attribute, a keyword, a def's or a parameter's name count as mentions)."""
        traced = self._facts.traced
        found = self._first_mention(loop, name)
        if found is None:
            return Kind.UNKNOWN
        if isinstance(found, ast.Name):
            return traced.kind(found)
        return traced.name_kind(name, self._function_around(loop, found))

    def _point(self, line: int, column: int) -> tuple[int, int]:
        line, column = self._facts.positions.point(line, column)
        return line, column - 1

    def _first_mention(self, loop: ast.stmt, name: str) -> ast.Name | tuple[int, int] | None:
        first = loop.body[0]
        starts = [(first.lineno, first.col_offset), *((d.lineno, d.col_offset) for d in getattr(first, "decorator_list", ()))]
        start = self._point(*min(starts))
        end = self._point(loop.body[-1].end_lineno, loop.body[-1].end_col_offset)
        names = {}
        for statement in loop.body:
            for node in ast.walk(statement):
                if type(node) is ast.Name and node.id == name:
                    names[self._point(node.lineno, node.col_offset)] = node
        spelled = [p for p in self._spelled_at(name) if start <= p < end]
        every = sorted({*spelled, *names})
        if not every:
            return None
        return names.get(every[0], every[0])

    def _spelled_at(self, name: str) -> list[tuple[int, int]]:
        """Where the module's tokens spell `name` (names inside f-strings before Python 3.12 are `ast`'s)."""
        if self._spelled is None:
            self._spelled = {}
            try:
                for token in tokenize.generate_tokens(StringIO(self._facts.text).readline):
                    if token.type == tokenize.NAME:
                        self._spelled.setdefault(token.string, []).append(token.start)
            except (tokenize.TokenError, SyntaxError):  # pragma: no cover - the module parsed
                pass
        return self._spelled.get(name, [])

    def _function_around(self, loop: ast.stmt, point: tuple[int, int]) -> ast.AST | None:
        """The innermost def or lambda of the loop body whose code (decorators included) holds `point`, else the
        loop's own function."""
        found = self._facts.traced.enclosing_function(loop)
        best = None
        for statement in loop.body:
            for node in ast.walk(statement):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    continue
                starts = [(node.lineno, node.col_offset), *((d.lineno, d.col_offset) for d in getattr(node, "decorator_list", ()))]
                start = self._point(*min(starts))
                if start <= point < self._point(node.end_lineno, node.end_col_offset):
                    if best is None or start >= best[0]:
                        best = (start, node)
        return best[1] if best is not None else found

    def kind_assuming(self, expr: ast.AST, function, assumed: dict[str, Kind]) -> Kind:
        """The kind of `expr` in `function` if the `assumed` names had those kinds."""
        if isinstance(expr, Update):  # from `x += v`
            left = self.kind_assuming(expr.left, function, assumed)
            return max(left, self.kind_assuming(expr.right, function, assumed))
        if type(expr) is ast.Name and expr.id in assumed:
            return assumed[expr.id]
        return self._facts.traced.kind(expr, within=function, assume=assumed)

    def kind_at(self, stmt: ast.stmt, expr: ast.AST) -> Kind:
        """The kind of `expr` (inside `stmt`, say a `while` test) where `stmt` starts, each local name it spells
        taking the join of the bindings that reach `stmt`, not of every binding in the function as `Traced.kind`
        does: `n = static_arg` then `if n is None: n = 32 // bits` then `while n < m:` is static there even though
        `n` is a traced parameter elsewhere. A loop's own updates reach its head."""
        facts = self._facts
        traced = facts.traced
        function = traced.enclosing_function(stmt)
        flow = facts.flow(facts.enclosing_function(stmt))
        assumed: dict[str, Kind] = {}
        for name in dict.fromkeys(spelled_names(expr)):
            if name not in flow.locals or name in flow.declared:
                continue
            kinds = []
            for source in flow.reaching(stmt, name):
                if source is UNDEFINED:
                    continue
                if isinstance(source, Parameter):
                    kinds.append(traced.param_kind(function, name) if function is not None else Kind.UNKNOWN)
                elif type(source) is ast.AugAssign or type(source) is ast.Assign:
                    kinds.append(traced.kind(source.value))  # `x += v`: the other operand is the name itself
                elif _is_expression(source):
                    kinds.append(traced.kind(source))
                else:  # a `for` target, `with ... as`, an import: what the flow-insensitive kind says
                    kinds.append(traced.name_kind(name, function))
            if kinds:
                assumed[name] = max(kinds)
        return traced.kind(expr, within=function, assume=assumed)

    # ---- the carry -----------------------------------------------------------------------------------------------

    def blocker(  # noqa: C901 - one condition after another, each with its message
        self,
        loop: ast.stmt,
        flow: LoopFlow,
        *,
        construct: str,
        bound: dict[str, Slot] | None = None,
        static_ints: bool = False,
        restartable: set[str] | None = None,
    ) -> str | None:
        """Why the carried values of `loop` cannot be a lax loop's carry, or None when they can (LibCST's
        `CarryAnalysis.blocker`, which documents `construct`, `bound` and `restartable`).

        `static_ints` lets through carried Python ints that stay Python ints in the loop (a counter `i = 0`,
        `i += 1`), which the lax loop turns into traced int32 values: a `while` on a traced test has no other
        way to run. The caller must then prove that nothing needs them as Python ints (`Purity.concrete_use`
        on `static_numbers(...)`)."""
        bound = bound or {}
        facts, traced, values = self._facts, self._facts.traced, self._values
        function_flow = facts.flow(facts.enclosing_function(loop))
        function = traced.enclosing_function(loop)
        numbers: list[str] = []
        init_rank: dict[str, int | None] = {}
        init_category: dict[str, Category | None] = {}
        only_numbers: set[str] = set()  # every binding that reaches the loop is a Python number
        if flow.declared:
            return f"`{flow.declared[0]}` is declared global or nonlocal"
        if flow.undefined:
            return f"`{flow.undefined[0]}` is carried from one step to the next but not defined before the loop"
        captured = captured_carries(flow, facts.enclosing_function(loop))
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
            if all(_is_expression(s) and is_number(s) and not _is_bool(s) for s in sources):
                only_numbers.add(name)
            for source in sorted(sources, key=_source_order):
                if source is UNDEFINED:
                    return f"`{name}` may be undefined when the loop starts"
                if isinstance(source, Parameter):
                    if function is None or traced.param_kind(function, name) is not Kind.TRACED:
                        return f"`{name}` is a parameter that is not known to be traced"
                    ranks.add(annotation_rank(source.node))
                    categories.add(annotation_category(source.node))
                    continue
                if type(source) is ast.AugAssign:
                    if traced.kind(source.value) is not Kind.TRACED:
                        return f"`{name}` is updated from static values before the loop"
                    ranks.add(None)
                    categories.add(None)
                    continue
                if type(source) is ast.Assign:  # a, b = ...
                    value = unpacked(source, name)
                    if value is None:
                        if traced.kind(source.value) is not Kind.TRACED:
                            return f"`{name}` starts as a value that is not known to be traced"
                        ranks.add(None)
                        categories.add(None)
                        continue
                    source = value
                if not _is_expression(source):
                    kind = _STATEMENT_NAMES.get(type(source), type(source).__name__.lower())
                    return f"`{name}` is bound by a `{kind}` statement before the loop"
                if type(source) is ast.Constant and source.value is None:
                    return f"`{name}` starts as None"
                if is_number(source):
                    if _is_bool(source):  # True, False
                        return f"`{name}` starts as a Python bool, which {construct} does not promote"
                    numbers.append(name)
                    ranks.add(0)
                    categories.add(None)  # weakly typed: JAX promotes it to the loop's dtype
                    continue
                kind = traced.kind(source)
                if kind is not Kind.TRACED:
                    what = "static" if kind is Kind.STATIC else "not known to be traced"
                    return f"`{name}` starts as a {what} value (`{snippet(self.code(source))}`)"
                ranks.add(values.rank(source))
                categories.add(values.category(source))
            init_rank[name] = ranks.pop() if len(ranks) == 1 else None
            init_category[name] = categories.pop() if len(categories) == 1 else None
        updates = {name: self.updates(loop, name) for name in flow.carried}
        # Python numbers must become traced in the loop, or the rewrite would turn a trace-time constant into
        # a traced int32 (wrapping on overflow, unusable as a shape).
        static = self._still_static(numbers, updates, function)
        allowed: set[str] = set()
        if static and static_ints:
            ints = {name: Category.INT for name in static}
            for name in sorted(static, key=list(flow.carried).index):
                reason = self._int_counter_blocker(loop, name, updates[name], function_flow, ints)
                if reason is not None:
                    return reason
            allowed, static = static, set()
        if static:
            name = sorted(static, key=list(flow.carried).index)[0]
            return f"`{name}` stays a Python number in the loop"
        for name in flow.carried:
            if name in allowed:
                continue
            if self.name_kind(loop, name) is not Kind.TRACED:
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
                if type(value) in (ast.Tuple, ast.List, ast.Dict, ast.Set):
                    return f"`{name}` becomes a Python {type(value).__name__.lower()} in the loop"
                reshaping = values.reshaping(value, name)
                if reshaping is not None:
                    return (
                        f"`{name}` may change shape from one step to the next (`{reshaping}`), and {construct} "
                        "needs a fixed shape"
                    )
                rank = values.rank(value, ranks)
                if name in numbers and rank != 0:
                    if restartable is None or name not in only_numbers:
                        return _NUMBER_SHAPE.format(name=name)
                    restartable.add(name)
                    continue
                if rank is not None and init_rank.get(name) is not None and rank != init_rank[name]:
                    return f"`{name}` changes rank from {init_rank[name]} to {rank} in the loop"
                before = init_category.get(name)
                exact = values.category(value, categories)
                after = exact if exact is not None else values.least_category(value, categories)
                changes = after != before if exact is not None else after is not None and before is not None and after > before
                if before is not None and after is not None and changes:
                    return (
                        f"`{name}` changes dtype from {before.name.lower()} to {after.name.lower()} in the loop "
                        f"(`{snippet(self.code(value))}`), and {construct} needs a fixed dtype; start it as "
                        f"{after.name.lower()} before the loop"
                    )
        return None

    def static_numbers(self, loop: ast.stmt, flow: LoopFlow) -> list[str]:
        """The carried names that start as Python numbers (`i = 0`) and stay Python numbers in the loop: only
        updated from themselves and static values (`i += 1`). A lax loop makes them traced."""
        function_flow = self._facts.flow(self._facts.enclosing_function(loop))
        numbers = []
        for name in flow.carried:
            for source in function_flow.reaching(loop, name):
                if type(source) is ast.Assign:
                    source = unpacked(source, name)
                if _is_expression(source) and is_number(source):
                    numbers.append(name)
                    break
        updates = {name: self.updates(loop, name) for name in numbers}
        static = self._still_static(numbers, updates, self._facts.traced.enclosing_function(loop))
        return [name for name in flow.carried if name in static]

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

    def _int_counter_blocker(self, loop: ast.stmt, name: str, updates, function_flow, ints) -> str | None:
        """Why the static carried number `name` cannot become a traced int32: it must start as an int literal
        on every path and stay an int (`i += 1`, not `i = i / 2`)."""
        for source in function_flow.reaching(loop, name):
            if type(source) is ast.Assign:
                source = unpacked(source, name)
            if not (_is_expression(source) and _is_int_literal(source)):
                return f"`{name}` stays a Python number in the loop and does not start as an int"
        for value in updates:
            if value is None or self._values.category(value, ints) is not Category.INT:
                return (
                    f"`{name}` stays a Python number in the loop and may not stay an int "
                    "(lax would compute it in float32)"
                )
        return None

    def updates(self, loop: ast.stmt, name: str) -> list[ast.expr | None]:
        """The values assigned to `name` in the loop body (None: an assignment whose value is not one
        expression of its own, like `a, b = f(x)`); `x += v` gives `x + v` (an `Update`). In source order,
        nested defs included, lambdas not."""
        found: list[ast.expr | None] = []

        def visit(node: ast.AST) -> None:
            kind = type(node)
            if kind is ast.Lambda:
                return
            if kind is ast.Assign:
                for target in node.targets:
                    if type(target) is ast.Name:
                        if target.id == name:
                            found.append(node.value)
                    elif name in target_names(target):
                        found.append(unpacked(node, name))
            elif kind is ast.AugAssign:
                if type(node.target) is ast.Name and node.target.id == name:
                    found.append(Update(name, node) if type(node.op) in _OPERATORS else None)
            elif kind is ast.AnnAssign:
                if type(node.target) is ast.Name and node.target.id == name and node.value is not None:
                    found.append(node.value)
            elif kind is ast.NamedExpr:
                if name in target_names(node.target):
                    found.append(None)
            elif kind is ast.For or kind is ast.AsyncFor:
                if name in target_names(node.target):
                    found.append(None)
            for child in children(node):
                visit(child)

        for statement in loop.body:
            visit(statement)
        visit = None  # the recursive closure holds itself (and `found`) in a cell: a cycle, unless cleared
        return found

    def code(self, expr: ast.AST) -> str:
        """The code of `expr` as LibCST's `code_for` gives it (with its own parentheses; `x + v` for an Update)."""
        positions = self._facts.positions
        if isinstance(expr, Update):
            return f"{expr.left.id} {_OPERATORS[type(expr.op)]} {positions.with_parentheses(expr.right, expr.statement)}"
        return positions.with_parentheses(expr, self._facts.binder.parents.get(expr))


def _source_order(source) -> tuple:
    """Reaching definitions in a fixed order: an unbound path, a parameter, then bindings in source order; the
    first that blocks names the reason (LibCST's carry sorts them so too)."""
    if source is UNDEFINED:
        return (0, 0, 0)
    if isinstance(source, Parameter):
        return (1, 0, 0)
    return (2, source.lineno, source.col_offset)


def _is_expression(source) -> bool:
    return isinstance(source, ast.expr)


def _is_bool(expr: ast.AST) -> bool:
    return type(expr) is ast.Constant and type(expr.value) is bool


unpacked = _unpacked  # the element of `a, b = x, y` bound to `name` (facts/predicates.py's, LibCST's reading)


def _is_int_literal(expr: ast.AST) -> bool:
    if type(expr) is ast.UnaryOp and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return type(expr) is ast.Constant and type(expr.value) is int


def snippet(text: str, limit: int = 50) -> str:
    """`text` on one line, cut to `limit` characters, for a message."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
