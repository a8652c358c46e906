"""Where the `ast` screens and the LibCST analyses disagree, fact by fact, on every node a rule may ask about.

    python benchmarks/agreement.py [PATH ...] [--families traced,kind-exact] [--all] [--classes N] [--write FILE]

Each fact is computed twice today: on `ast` by jaxfix/analysis/screen.py (the screens that let a rule skip a
file) and on LibCST by the analyses behind ModuleContext. Issue 34 moves each fact onto `ast` alone; this script
shows, before that, where the two answers differ. For every candidate node of a file (every function, every
expression in traced code, every `if`/`while` test in traced code, every loop in a function) it asks both sides,
through jaxfix/edit/bridge.py, and classifies the pair:
- agree: the same answer;
- imprecise: the `ast` side says "may" where LibCST says "no" (a may-screen, `may`), or "not surely" where LibCST
  says "yes" (a must-screen, `must`): it costs a LibCST run, never a finding;
- unsound: the `ast` side rules out what LibCST finds: a screen that may hide a finding, or a must-screen that
  may block a rewrite LibCST allows;
- unmapped: the bridge found no LibCST node for the `ast` node; error: one side raised.
A `kind` direction is a pair on `ast` (may it be TRACED, may it be STATIC) against one of STATIC, UNKNOWN,
TRACED: each half is a may-screen (the kind screens, which had such families, now ask the exact fact). An `exact`
family asks one fact written on `ast` (jaxfix/facts/) and the analysis the rules ask with LibCST nodes (once the
LibCST logic it replaced, which agreed exactly on every tree before it was deleted; now the adapter over the
bridge): any difference is unsound. Key flow was compared so too (facts/keys.py against KeyAnalysis, before
KeyAnalysis was deleted: no difference on the examples, the corpus, tests/planted and the 10 real trees), and so
were facts/values.py's array-at-run-time, inexact, Python-int and `rebind_blocker` answers against ArrayAnalysis's
before those left it with JF401 (values-integer-exact: 26,683 expressions of the examples, the corpus and
tests/planted and 716,095 of the 10 real trees, no difference; values-rebind-exact: the 27 item assignments to an
array there, no difference, none in the real trees), and facts/branches.py's BranchFacts against BranchAnalysis
before that was deleted with JF201, JF202 and JF204's move (branches-exact: every `if` and conditional expression,
no difference; benchmarks/agreement/real-code.md), and facts/row_writes.py's RowWrites against RowWriteAnalysis
before that was deleted with JF104's move (rows-exact: every call spelled fori_loop, no difference).

Without PATH: examples/, corpus/ and tests/planted/. Each PATH is checked as its own project (its files' facts
from the project index, as `jaxfix check PATH` gives them). Prints a table per family and every unsound or
failing pair as `path:line:col family ast=... cst=... `code``; `--all` lists the imprecise ones too, `--classes N`
the N commonest kinds of disagreement with examples; `--write FILE` saves the unsound, failing and imprecise
pairs. Exits 1 when some pair is unsound.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import Callable, Iterable, Iterator

import libcst as cst
from libcst.metadata import MetadataWrapper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # jaxfix from this checkout

from jaxfix.analysis import screen as screens  # noqa: E402
from jaxfix.analysis.context import ModuleContext  # noqa: E402
from jaxfix.analysis.predicates import Truth  # noqa: E402
from jaxfix.analysis.screen import Screen  # noqa: E402
from jaxfix.analysis.traced import Kind  # noqa: E402
from jaxfix.edit.bridge import Bridge  # noqa: E402
from jaxfix.analysis.syntax import param_names as cst_param_names  # noqa: E402
from jaxfix.analysis.dataflow import UNDEFINED as CST_UNDEFINED, Parameter as CstParameter  # noqa: E402
from jaxfix.facts import carry as carry_fact  # noqa: E402
from jaxfix.facts.module import FileFacts  # noqa: E402
from jaxfix.facts.loops import FunctionFlow, loop_flow, match_reads  # noqa: E402
from jaxfix.facts.flow import UNDEFINED, Lines, Parameter, Reaching, activity  # noqa: E402
from jaxfix.facts.literals import int_constant, range_steps  # noqa: E402
from jaxfix.facts.predicates import Predicates  # noqa: E402
from jaxfix.facts.traced import Traced, param_names as ast_param_names  # noqa: E402
from jaxfix.facts.values import Values  # noqa: E402
from jaxfix.analysis.dataflow import activity as cst_activity  # noqa: E402
from jaxfix.analysis.dataflow import block_flow as cst_block_flow  # noqa: E402
from jaxfix.analysis.syntax import body_statements as cst_body_statements  # noqa: E402
from jaxfix.facts.purity import Purity  # noqa: E402


def _sources(paths: list[str]) -> list[tuple[str, str, object]]:
    """benchmarks/screens.py's `_sources`: each PATH's files, with their facts from the project index."""
    spec = importlib.util.spec_from_file_location("jaxfix_benchmarks_screens", ROOT / "benchmarks" / "screens.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._sources(paths)


DEFAULT_PATHS = ("examples", "corpus", "tests/planted")
CLASSES = ("agree", "imprecise", "unsound", "unmapped", "error")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


class Sides:
    """One file on both sides: its Screen (`ast`), its ModuleContext (LibCST, as the engine builds it: the same
    tree, project facts and screen), and the bridge between them."""

    def __init__(self, path: str, text: str, facts) -> None:
        self.path, self.text = path, text
        self.screen = Screen(text, None, facts)
        self.tree = self.screen.tree
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        self.context = ModuleContext(wrapper, self.tree, facts, self.screen)
        self.bridge = Bridge(self.context.module, self.tree, self.context.positions)
        self.facts = facts

    @cached_property
    def lines(self) -> Lines:
        return Lines(self.text)

    @cached_property
    def bound(self) -> dict:
        """facts.flow.Reaching of each function asked (or the module)."""
        return {}

    @cached_property
    def flows(self) -> dict:
        """facts.loops.FunctionFlow of each function asked (or the module)."""
        return {}

    @cached_property
    def file_facts(self) -> FileFacts:
        """The FileFacts a `check`-rule reads of this file (the screen's binder and traced fact)."""
        return FileFacts(self.text, self.tree, self.facts, self.screen)

    @cached_property
    def carry(self) -> carry_fact.CarryAnalysis:
        """facts.carry on `ast`, its ranks and categories from facts/shapes.py."""
        return self.file_facts.carry

    def _reaching(self, function: ast.AST) -> Reaching:
        found = self.bound.get(function)
        if found is None:
            found = self.bound[function] = Reaching(function, self.lines)
        return found

    @cached_property
    def predicates(self) -> Predicates:
        """The predicates fact on `ast` (jaxfix/facts/predicates.py) over the screen's binder and traced fact."""
        return Predicates(self.screen.binder, self.screen.traced_fact, self.lines, _values(self), self._reaching)

    @cached_property
    def traced(self) -> Traced:
        """The traced fact on `ast` (jaxfix/facts/traced.py), with the same project facts."""
        return Traced(self.tree, project=self.facts)

    @cached_property
    def functions(self) -> list[ast.AST]:
        return self.screen.nodes_of(*_FUNCTIONS)

    @cached_property
    def purity(self) -> Purity:
        """The purity fact on `ast` (jaxfix/facts/purity.py), over the screen's binder and traced fact."""
        screen = self.screen
        return Purity(screen.binder, screen.traced_fact, screen.positions, self.lines, self.predicates)

    @cached_property
    def in_traced_code(self) -> set[int]:
        """id() of every node `Screen.in_traced_code` yields (asked once, for every node type of the module)."""
        types = tuple({type(node) for node in self.screen.nodes})
        return {id(node) for node in self.screen.in_traced_code(*types)}

    @cached_property
    def traced_on_libcst(self) -> list[ast.AST]:
        """The functions whose body TracedAnalysis finds traced: where the kinds and truth tests are asked."""
        found = []
        for function in self.functions:
            body = first_body_node(function)
            spelled = self.bridge.cst_of(body)
            if spelled is not None and self.context.traced.in_traced_code(spelled):
                found.append(function)
        return found

    @cached_property
    def traced_expressions(self) -> list[ast.expr]:
        """Every expression read in a function TracedAnalysis traces (its own body, not a nested function's)."""
        traced = {id(f) for f in self.traced_on_libcst}
        owner = self.screen.function_of
        parts = self._unspelled
        return [
            node for node in self.screen.nodes
            if isinstance(node, ast.expr) and not isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))
            and id(owner.get(id(node))) in traced and id(node) not in parts
            and not _in_signature(owner.get(id(node)), node)
        ]  # fmt: skip

    @cached_property
    def _unspelled(self) -> set[int]:
        """id() of the expressions LibCST has no expression for: an f-string's literal parts, its `{...}` fields
        and their format specs, and the tuple of `x[i, j]` (LibCST's subscript holds `i` and `j` itself)."""
        found: set[int] = set()
        for node in self.screen.nodes_of(ast.JoinedStr):
            found.update(id(part) for part in node.values)
            found.update(id(part.format_spec) for part in node.values if isinstance(part, ast.FormattedValue) and part.format_spec)
        found.update(id(n.slice) for n in self.screen.nodes_of(ast.Subscript) if isinstance(n.slice, ast.Tuple))
        return found

    @cached_property
    def expressions(self) -> list[ast.expr]:
        """Every expression read anywhere in the module (TracedAnalysis.kind answers for each, traced or not)."""
        parts = self._unspelled
        return [
            node for node in self.screen.nodes
            if isinstance(node, ast.expr) and not isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))
            and id(node) not in parts
        ]  # fmt: skip

    @cached_property
    def traced_tests(self) -> list[ast.expr]:
        traced = {id(f) for f in self.traced_on_libcst}
        owner = self.screen.function_of
        return [n.test for n in self.screen.nodes_of(ast.If, ast.While) if id(owner.get(id(n))) in traced]

    @cached_property
    def loops(self) -> list[ast.AST]:
        """Every loop inside a function (at module level no loop rule rewrites: nothing is traced there)."""
        return [loop for loop in self.screen.nodes_of(*_LOOPS) if self.screen.function_of.get(id(loop)) is not None]


def first_body_node(function: ast.AST) -> ast.AST:
    """The node that stands for a function's body in "is this node in traced code": its first statement, or a
    lambda's expression."""
    return function.body if isinstance(function, ast.Lambda) else function.body[0]


def _in_signature(function: ast.AST | None, node: ast.AST) -> bool:
    """Whether `node` lies in `function`'s decorators, defaults or annotations (run where the def is, not traced)."""
    if function is None:
        return False
    body = [function.body] if isinstance(function, ast.Lambda) else function.body
    first = body[0]
    return (node.lineno, node.col_offset) < (first.lineno, first.col_offset)


# ---- the families ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    """One fact asked on both sides. `direction`: "may" (the `ast` side over-approximates LibCST's yes), "must"
    (it under-approximates it), "exact" (the same answer) or "kind" (a (may be TRACED, may be STATIC) pair
    against a Kind). `place` gives the node whose LibCST counterpart the LibCST side is asked about (the
    candidate itself by default)."""

    name: str
    what: str
    direction: str
    candidates: Callable[[Sides], Iterable[ast.AST]]
    on_ast: Callable[[Sides, ast.AST], object]
    on_libcst: Callable[[Sides, cst.CSTNode], object]
    place: Callable[[ast.AST], ast.AST] = lambda node: node


def _loop_flow(sides: Sides, loop: cst.CSTNode):
    return sides.context.dataflow.loop(loop)


def _appended_names(loop: cst.CSTNode) -> set[str]:
    """The names whose `.append(...)` the body calls (the lists JF102 lets the body append to: `appendable`)."""
    found: set[str] = set()

    class Appends(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name):
                found.add(func.value.value)

    loop.body.visit(Appends())
    return found


def _screen(fact: Callable, **options) -> Callable[[Sides, ast.AST], object]:
    """The `ast` side: a screen function of jaxfix.analysis.screen, looked up when asked (a test replaces one)."""
    name = fact.__name__
    return lambda sides, node: getattr(screens, name)(sides.screen, node, **options)


def _on_body(fact: Callable[[Sides, ast.AST], object]) -> Callable[[Sides, ast.AST], object]:
    return lambda sides, function: fact(sides, first_body_node(function))


def _in_traced_code(sides: Sides, node: cst.CSTNode) -> bool:
    return sides.context.traced.in_traced_code(node)


def _tracer(sides: Sides, node: cst.CSTNode) -> bool:
    return sides.context.predicates.tracer(node)


def _may_fail(sides: Sides, node: cst.CSTNode) -> bool:
    return sides.context.predicates.test(node) is not Truth.OTHER


def _carries(sides: Sides, loop: cst.CSTNode) -> bool:
    return bool(_loop_flow(sides, loop).carried)


def _function_facts(traced, function, params: list[str]) -> tuple:
    """Everything TracedAnalysis answers about one function, comparable across the two trees."""
    is_traced = traced.is_traced(function)
    seeded = traced.seeded_kind(function, params[0]) if params else None
    return (
        is_traced, tuple(sorted(traced.transforms(function))), traced.staged(function), traced.compiled(function),
        tuple(traced.param_kind(function, p).name for p in params) if is_traced else (),
        tuple(traced.seeded_kind(function, p).name for p in params) if seeded is not None else None,
        len(traced.traced_call_sites(function)),
    )


def _traced_on_ast(sides: Sides, function: ast.AST) -> tuple:
    return _function_facts(sides.traced, function, ast_param_names(function.args))


def _traced_on_libcst(sides: Sides, function: cst.CSTNode) -> tuple:
    return _function_facts(sides.context.traced, function, cst_param_names(function.params))


def _kind_exact(sides: Sides, node: ast.AST) -> str:
    return sides.traced.kind(node).name


def _guarded_on_ast(sides: Sides, node: ast.AST) -> bool:
    return sides.traced.guarded(node)


def _all_expressions(sides: Sides) -> list[ast.expr]:
    return sides.expressions


def _branches(sides: Sides) -> list[ast.AST]:
    return sides.screen.nodes_of(ast.If, ast.While)


def _functions(sides: Sides) -> list[ast.AST]:
    return sides.functions


def _expressions(sides: Sides) -> list[ast.expr]:
    return sides.traced_expressions


def _tests(sides: Sides) -> list[ast.expr]:
    return sides.traced_tests


def _truth_tests(sides: Sides) -> list[ast.expr]:
    """Every expression Python tests for truth in the module: the tests of `if`, `while`, conditional expressions,
    `assert` and comprehension filters, each `and`/`or` and each `not` with its operand."""
    found: dict[int, ast.expr] = {}
    for node in sides.screen.nodes_of(ast.If, ast.While, ast.IfExp, ast.Assert, ast.comprehension, ast.BoolOp, ast.UnaryOp):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tested = [node.test]
        elif isinstance(node, ast.comprehension):
            tested = list(node.ifs)
        elif isinstance(node, ast.BoolOp):
            tested = [node]
        else:
            tested = [node, node.operand] if isinstance(node.op, ast.Not) else []
        for expr in tested:
            found.setdefault(id(expr), expr)
    return list(found.values())


def _loops(sides: Sides) -> list[ast.AST]:
    return sides.loops


def _int_expressions(sides: Sides) -> list[ast.expr]:
    """Every expression read in the module that LibCST's Shapes.constant may fold: int literals, signs, arithmetic,
    names (its other expressions answer None on both sides by construction)."""
    kinds = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.Name)
    return [node for node in sides.expressions if type(node) in kinds]


def _range_calls(sides: Sides) -> list[ast.Call]:
    """Every call of the builtin `range` (JF703 asks the steps of the `for` loops' ones)."""
    binder = sides.screen.binder
    return [c for c in sides.screen.nodes_of(ast.Call) if binder.is_builtin(c.func, "range")]


def _literal_trip(sides: Sides, call: cst.CSTNode):
    from jaxfix.analysis.loops import range_trip

    trip = range_trip(sides.context, call)
    return trip.count if trip is not None and trip.kind == "literal" else None


def _line_starts(sides: Sides) -> list[ast.stmt]:
    """The first statement of each line LibCST holds (`Lines.group`), in every block of the module."""
    lines = sides.lines
    found = []
    for node in [sides.tree, *sides.screen.nodes]:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                found += [group[0] for _, group in lines.group(block)]
    return found


def _bound_on_ast(sides: Sides, statement: ast.stmt) -> tuple[str, ...]:
    parents = sides.screen.binder.parents
    function = parents.get(statement)
    while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        function = parents.get(function)
    function = function or sides.tree
    bound = sides.bound.get(function)
    if bound is None:
        bound = sides.bound[function] = Reaching(function, sides.lines)
    return tuple(sorted(n for n in bound.locals if bound.defined_before(statement, n)))


def _bound_on_libcst(sides: Sides, node: cst.CSTNode) -> tuple[str, ...]:
    if isinstance(node, cst.BaseSmallStatement):
        node = sides.context.parents[node]
    dataflow = sides.context.dataflow
    flow = dataflow.flow(dataflow.enclosing_function(node))
    return tuple(sorted(n for n in flow.locals if flow.defined_before(node, n)))


_CONSTANTS = ("None", "True", "False")  # names in LibCST, constants in `ast`


def _function_of(sides: Sides, node: ast.AST) -> ast.AST:
    """The def holding the statement `node`, or the module (statements lie in no lambda)."""
    parents = sides.screen.binder.parents
    function = parents.get(node)
    while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        function = parents.get(function)
    return function or sides.tree


def _flow_on_ast(sides: Sides, function: ast.AST) -> FunctionFlow:
    flow = sides.flows.get(function)
    if flow is None:
        flow = sides.flows[function] = FunctionFlow(function, sides.lines)
    return flow


def _all_loops(sides: Sides) -> list[ast.AST]:
    return sides.screen.nodes_of(*_LOOPS)


def _names(names) -> tuple[str, ...]:
    return tuple(sorted(set(names) - set(_CONSTANTS)))


def _loop_fields(flow) -> tuple:
    return (
        ("targets", flow.targets), ("modified", flow.modified), ("live_in", _names(flow.live_in)),
        ("live_out", _names(flow.live_out)), ("carried", flow.carried), ("undefined", flow.undefined),
        ("mutated", flow.mutated), ("declared", flow.declared), ("targets_live_out", flow.targets_live_out),
    )  # fmt: skip


def _loop_on_ast(sides: Sides, loop: ast.AST) -> tuple:
    return _loop_fields(loop_flow(_flow_on_ast(sides, _function_of(sides, loop)), loop))


def _source_on_ast(sides: Sides, source) -> str:
    """A reaching definition as both sides can spell it: UNDEFINED, PARAM(name), or where its node starts (line,
    column in characters), which tells a binding statement or a value apart."""
    if source is UNDEFINED or isinstance(source, Parameter):
        return repr(source)
    spelled = sides.bridge.cst_of(source)  # `ast` spans a tuple's parentheses, LibCST not
    if spelled is not None:
        return _source_on_libcst(sides, spelled)
    line, column = sides.bridge.point(source.lineno, source.col_offset)
    return f"{line}:{column}"


def _source_on_libcst(sides: Sides, source) -> str:
    if source is CST_UNDEFINED or isinstance(source, CstParameter):
        return repr(source)
    where = sides.context.positions[source].start
    return f"{where.line}:{where.column}"


def _flow_at_ast(sides: Sides, statement: ast.stmt) -> tuple:
    flow = _flow_on_ast(sides, _function_of(sides, statement))
    group = next((g for _, g in sides.lines.group(_block_holding(sides, statement)) if g[0] is statement), [statement])
    reads = [n for s in group for n in match_reads(s, activity(s, deep=False))]
    found = tuple((n, tuple(sorted(_source_on_ast(sides, s) for s in flow.reaching(statement, n)))) for n in _names(reads))
    return str((found, _names(flow.live_after(statement))))


def _block_holding(sides: Sides, statement: ast.stmt) -> list[ast.stmt]:
    from jaxfix.facts.flow import block_of

    return block_of(statement, sides.screen.binder.parents.get(statement) or sides.tree) or [statement]


def _flow_at_libcst(sides: Sides, node: cst.CSTNode) -> tuple:
    if isinstance(node, cst.BaseSmallStatement):
        node = sides.context.parents[node]
    dataflow = sides.context.dataflow
    flow = dataflow.flow(dataflow.enclosing_function(node))
    reads = cst_activity(node, deep=False).reads
    found = tuple(
        (n, tuple(sorted(_source_on_libcst(sides, s) for s in flow.reaching(node, n)))) for n in _names(reads)
    )
    return str((found, _names(flow.live_after(node))))


_CST_OPERATORS = {
    ast.Add: cst.Add, ast.Sub: cst.Subtract, ast.Mult: cst.Multiply, ast.Div: cst.Divide, ast.FloorDiv: cst.FloorDivide,
    ast.Mod: cst.Modulo, ast.Pow: cst.Power, ast.MatMult: cst.MatrixMultiply, ast.BitAnd: cst.BitAnd,
    ast.BitOr: cst.BitOr, ast.BitXor: cst.BitXor,
}  # fmt: skip


def _shape_answers(shapes, expr) -> tuple:
    name = lambda found: None if found is None else found.name  # noqa: E731 (two Category enums, one per tree)
    return (
        shapes.rank(expr), shapes.least_rank(expr), name(shapes.category(expr)), name(shapes.least_category(expr)),
    )


def _shapes_on_ast(sides: Sides, expr: ast.expr) -> tuple:
    return _shape_answers(sides.file_facts.shapes, expr)


def _shapes_on_libcst(sides: Sides, node: cst.CSTNode) -> tuple:
    return _shape_answers(sides.context.shapes, node)


def _assigned_values(sides: Sides) -> list[ast.expr]:
    """The value of each `name = value` (one target, a name): what a loop's carry asks `reshaping` of."""
    return [
        n.value for n in sides.screen.nodes_of(ast.Assign) if len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
    ]


def _reshaping_on_ast(sides: Sides, value: ast.expr) -> str | None:
    assign = sides.file_facts.binder.parent(value)
    return sides.file_facts.shapes.reshaping(value, assign.targets[0].id)


def _reshaping_on_libcst(sides: Sides, node: cst.CSTNode) -> str | None:
    assign = sides.context.parents[node]
    return sides.context.shapes.reshaping(node, assign.targets[0].target.value)



def _carry_answers(carry, loop, flow) -> tuple:
    restarted: set[str] = set()
    return (
        ("blocker", carry.blocker(loop, flow, construct="lax.fori_loop")),
        ("restartable", carry.blocker(loop, flow, construct="lax.scan", restartable=restarted), tuple(sorted(restarted))),
        ("name_kind", tuple((n, carry.name_kind(loop, n).name) for n in flow.carried)),
    )


def _carry_on_ast(sides: Sides, loop: ast.AST) -> tuple:
    return _carry_answers(sides.carry, loop, sides.file_facts.loop(loop))


def _carry_on_libcst(sides: Sides, loop: cst.CSTNode) -> tuple:
    return _carry_answers(sides.context.carry, loop, sides.context.dataflow.loop(loop))
def _name_loads(sides: Sides) -> list[ast.Name]:
    """Every name read in the module outside a lambda (whose flow LibCST holds no statements for)."""
    return [
        node for node in sides.screen.nodes_of(ast.Name)
        if isinstance(node.ctx, ast.Load) and not isinstance(_flow_owner(sides, node), ast.Lambda)
    ]  # fmt: skip


def _flow_owner(sides: Sides, node: ast.AST) -> ast.AST:
    parents = sides.screen.binder.parents
    owner = parents.get(node)
    while owner is not None and not isinstance(owner, _FUNCTIONS):
        owner = parents.get(owner)
    return owner if owner is not None else sides.tree


def _described(sides: Sides, source) -> str:
    """A reaching definition of either tree, spelled the same: `param x`, `UNDEFINED` or the LibCST node's type
    and place."""
    if isinstance(source, (Parameter, CstParameter)):
        return f"param {source.node.arg if isinstance(source, Parameter) else source.param.name.value}"
    if source is UNDEFINED or source is CST_UNDEFINED:
        return "UNDEFINED"
    if isinstance(source, ast.AST):
        spelled = sides.bridge.cst_of(source)
        if spelled is None:  # the bridge's own gap (bound-exact lists it as unmapped): named by where it starts
            line, column = sides.bridge.point(source.lineno, source.col_offset)
            return f"{type(source).__name__}@{line}:{column}"
        source = spelled
    where = sides.context.positions[source].start
    return f"{type(source).__name__}@{where.line}:{where.column}"


def _reaching_on_ast(sides: Sides, name: ast.Name) -> tuple[str, ...]:
    parents = sides.screen.binder.parents
    statement = parents.get(name)
    while statement is not None and not isinstance(statement, ast.stmt):
        statement = parents.get(statement)
    if statement is None:
        return ()
    function = _flow_owner(sides, name)
    reaching = sides._reaching(function)
    return tuple(sorted(_described(sides, s) for s in reaching.reaching(statement, name.id)))


def _reaching_on_libcst(sides: Sides, name: cst.CSTNode) -> tuple[str, ...]:
    parents = sides.context.parents
    statement = name
    while statement is not None and not isinstance(
        statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.BaseCompoundStatement)
    ):
        statement = parents.get(statement)
    if statement is None:
        return ()
    dataflow = sides.context.dataflow
    flow = dataflow.flow(dataflow.enclosing_function(name))
    return tuple(sorted(_described(sides, s) for s in flow.reaching(statement, name.value)))


def _values(sides: Sides) -> Values:
    found = sides.__dict__.get("values_fact")
    if found is None:
        found = sides.__dict__["values_fact"] = Values(sides.screen.binder, sides.screen.traced_fact, sides.screen.positions)
    return found


def _names_read(sides: Sides) -> list[ast.Name]:
    """Every name read in the module: where a rule asks whether a name holds an array (JF401's item assignments'
    bases and JF705's replicated values are names read)."""
    return [node for node in sides.expressions if type(node) is ast.Name]


def _array_on_ast(sides: Sides, name: ast.Name) -> bool:
    return _values(sides).is_array(name)


def _array_on_libcst(sides: Sides, name: cst.CSTNode) -> bool:
    return sides.context.arrays.is_array(name)


_BODY = "at each function's first body node"
_EXPRESSION = "for each expression read in traced code"
# ---- purity: Dataflow's impurity, block_impurity, function_impurity and concrete_use against facts/purity.py ----
# What needs liveness is handed to both sides as a parameter of facts/purity.py: a loop's live-in names come from
# each side's own liveness (facts/loops.py on `ast`, FunctionFlow on LibCST); an `if` arm's outside names from
# LibCST's block_flow for both (block_flow is not on `ast` yet).

def _cst_blocker(sides: Sides, blocker) -> str:
    if blocker is None:
        return "pure"
    node = blocker.node
    if isinstance(node, cst.Decorator):
        node = node.decorator
    elif isinstance(node, cst.Else):  # `ast` has no node for the clause: its first statement stands for it
        node = cst_body_statements(node.body)[0]
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            node = node.body[0]
    start = sides.context.positions[node].start
    return f"{blocker.reason} @{start.line}:{start.column}" + (" collects" if blocker.collects else "")


def _ast_blocker(sides: Sides, blocker) -> str:
    if blocker is None:
        return "pure"
    line, column = sides.bridge.point(blocker.node.lineno, blocker.node.col_offset)
    return f"{blocker.reason} @{line}:{column}" + (" collects" if blocker.collects else "")


def _purity_candidates(sides: Sides) -> list[ast.AST]:
    """Every loop, function, `if` and conditional expression of the module."""
    return sides.screen.nodes_of(*_LOOPS, *_FUNCTIONS, ast.If, ast.IfExp)


def _appended(loop: cst.CSTNode) -> frozenset[str]:
    return frozenset(_appended_names(loop))


def _cst_arms(node: cst.If) -> list[list[cst.CSTNode]]:
    arms = [list(cst_body_statements(node.body))]
    if isinstance(node.orelse, cst.If):
        arms.append([node.orelse])
    elif node.orelse is not None:
        arms.append(list(cst_body_statements(node.orelse.body)))
    return arms


def _impurity_on_libcst(sides: Sides, node: cst.CSTNode) -> str:
    dataflow = sides.context.dataflow
    show = partial(_cst_blocker, sides)
    if isinstance(node, (cst.For, cst.While)):
        found = [show(dataflow.impurity(node)), show(dataflow.impurity(node, appendable=_appended(node)))]
        if isinstance(node, cst.For) and isinstance(node.target, cst.Name):
            found.append(show(dataflow.concrete_use(node, [node.target.value])))
        elif isinstance(node, cst.While):
            names = [n for n in cst_activity(node.test).reads if n in cst_activity(node.body).writes]
            found.append(show(dataflow.concrete_use(node, names, also=[node.test])))
        return " | ".join(found)
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        params = frozenset(cst_param_names(node.params))
        return f"{show(dataflow.function_impurity(node))} | {show(dataflow.function_impurity(node, arrays=params))}"
    if isinstance(node, cst.If):
        return " | ".join(show(dataflow.block_impurity(arm, outside=cst_block_flow(arm).live_in)) for arm in _cst_arms(node))
    lines = [cst.SimpleStatementLine([cst.Expr(node.body)]), cst.SimpleStatementLine([cst.Expr(node.orelse)])]
    return show(dataflow.block_impurity(lines, outside=()))


def _impurity_on_ast(sides: Sides, node: ast.AST) -> str:
    purity = sides.purity
    show = partial(_ast_blocker, sides)
    twin = sides.bridge.cst_of(node)
    if isinstance(node, _LOOPS):
        live_in = sides.file_facts.loop(node).live_in  # liveness on `ast` (facts/loops.py), not the LibCST side's
        found = [show(purity.impurity(node, live_in)), show(purity.impurity(node, live_in, appendable=_appended(twin)))]
        if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.target, ast.Name):
            found.append(show(purity.concrete_use(node, [node.target.id])))
        elif isinstance(node, ast.While):
            names = [n for n in cst_activity(twin.test).reads if n in cst_activity(twin.body).writes]
            found.append(show(purity.concrete_use(node, names, also=[node.test])))
        return " | ".join(found)
    if isinstance(node, _FUNCTIONS):
        params = frozenset(ast_param_names(node.args))
        return f"{show(purity.function_impurity(node))} | {show(purity.function_impurity(node, arrays=params))}"
    if isinstance(node, ast.If):
        arms = [node.body, *([node.orelse] if node.orelse else [])]
        return " | ".join(
            show(purity.block_impurity(arm, outside=cst_block_flow(cst_arm).live_in))
            for arm, cst_arm in zip(arms, _cst_arms(twin))
        )
    parts = [ast.copy_location(ast.Expr(part), part) for part in (node.body, node.orelse)]
    return show(purity.block_impurity(parts, outside=()))


def _array_like_on_ast(sides: Sides, node: ast.expr) -> bool:
    return sides.purity.is_array_like(node)


FAMILIES: list[Family] = [
    Family("traced", f"Screen.in_traced_code vs TracedAnalysis.in_traced_code, {_BODY}", "may", _functions,
           _on_body(lambda s, node: id(node) in s.in_traced_code), _in_traced_code, first_body_node),
    Family("tracer", f"Screen.may_be_tracer vs PredicateAnalysis.tracer, {_EXPRESSION}", "may", _expressions,
           lambda s, e: s.screen.may_be_tracer(e), _tracer),
    Family("truth", "Screen.may_fail_truth vs PredicateAnalysis.test is not OTHER, for each if/while test in traced "
           "code", "may", _tests, lambda s, e: s.screen.may_fail_truth(e), _may_fail),
    Family("truth-strict", "Screen.may_fail_truth(strict=True) vs PredicateAnalysis.test is not OTHER, same tests",
           "may", _tests, lambda s, e: s.screen.may_fail_truth(e, strict=True), _may_fail),
    Family("carry", "may_carry vs LoopFlow.carried (Dataflow.loop), for each loop in a function", "may", _loops,
           _screen(screens.may_carry), _carries),
    Family("carry-sure", "surely_carries vs LoopFlow.carried, for each loop in a function", "must", _loops,
           _screen(screens.surely_carries), _carries),
    Family("carry-undefined", "surely_undefined_carry vs LoopFlow.undefined (CarryAnalysis.blocker's first reason)",
           "must", _loops, _screen(screens.surely_undefined_carry), lambda s, loop: bool(_loop_flow(s, loop).undefined)),
    Family("traced-exact", "facts.traced.Traced vs TracedAnalysis (LibCST nodes, through the bridge): traced, transforms, staged, compiled, parameter "
           "kinds, seeded kinds, traced call sites, for each function", "exact", _functions, _traced_on_ast,
           _traced_on_libcst),
    Family("kind-exact", "facts.traced.Traced.kind vs TracedAnalysis.kind, for each expression read in the module",
           "exact", _all_expressions, _kind_exact, lambda s, node: s.context.traced.kind(node).name),
    Family("guarded-exact", "facts.traced.Traced.guarded vs TracedAnalysis.guarded, for each if/while", "exact",
           _branches, _guarded_on_ast, lambda s, node: s.context.traced.guarded(node)),
    Family("bound-exact", "facts.flow.Reaching.defined_before vs FunctionFlow.defined_before, for each line of each "
           "block: the locals bound on every path to it", "exact", _line_starts, _bound_on_ast, _bound_on_libcst),
    Family("loop-flow-exact", "facts.loops.loop_flow vs analysis.dataflow.loop_flow (Dataflow.loop): every field, "
           "for each for/while", "exact", _all_loops, _loop_on_ast,
           lambda s, loop: _loop_fields(s.context.dataflow.loop(loop))),
    Family("flow-exact", "facts.loops.FunctionFlow vs analysis.dataflow.FunctionFlow: the bindings reaching each "
           "line of each block for each name it reads, and the names live after it", "exact", _line_starts,
           _flow_at_ast, _flow_at_libcst),
    Family("carry-exact", "facts.carry.CarryAnalysis vs analysis.carry.CarryAnalysis (ranks and categories from "
           "facts/shapes.py and ShapeAnalysis): blocker (plain, restartable) and name_kind of each carried name, "
           "for each for/while", "exact", _all_loops, _carry_on_ast, _carry_on_libcst),
    Family("reaching-exact", "facts.flow.Reaching.reaching vs FunctionFlow.reaching, for each name read outside a "
           "lambda: the bindings that may reach its line", "exact", _name_loads, _reaching_on_ast, _reaching_on_libcst),
    Family("tracer-exact", f"facts.predicates.Predicates.tracer vs PredicateAnalysis.tracer (the adapter over the "
           f"bridge), {_EXPRESSION}", "exact",
           _expressions, lambda s, e: s.predicates.tracer(e), _tracer),
    Family("array-evidence-exact", "facts.predicates.Predicates.array_evidence vs PredicateAnalysis.array_evidence, "
           f"{_EXPRESSION}", "exact", _expressions, lambda s, e: s.predicates.array_evidence(e),
           lambda s, node: s.context.predicates.array_evidence(node)),
    Family("truth-exact", "facts.predicates.Predicates.truth vs PredicateAnalysis.test (which the branch rules "
           "read), for each truth test in the module (if/while/conditional/assert/comprehension tests, and/or, not "
           "and its operand)", "exact", _truth_tests, lambda s, e: s.predicates.truth(e).name,
           lambda s, node: s.context.predicates.test(node).name),
    Family("int-constant-exact", "facts.literals.int_constant vs Shapes.constant, for each literal, sign, arithmetic "
           "or name read in the module", "exact", _int_expressions,
           lambda s, node: int_constant(s.screen.binder, node), lambda s, node: s.context.shapes.constant(node)),
    Family("shapes-exact", "facts.shapes.Shapes vs analysis.shapes.ShapeAnalysis: rank, least_rank, category and "
           "least_category of each expression read in the module", "exact", _all_expressions, _shapes_on_ast,
           _shapes_on_libcst),
    Family("reshaping-exact", "facts.shapes.Shapes.reshaping vs ShapeAnalysis.reshaping, for the value of each "
           "`name = value`", "exact", _assigned_values, _reshaping_on_ast, _reshaping_on_libcst),
    Family("values-array-exact", "facts.values.Values.is_array vs ArrayAnalysis.is_array (which the unmoved rules "
           "read), for each name read in the module", "exact", _names_read, _array_on_ast, _array_on_libcst),
    Family("range-steps-exact", "facts.literals.range_steps vs range_trip's literal count, for each call of the "
           "builtin range", "exact", _range_calls, lambda s, node: range_steps(s.screen.binder, s.screen.traced_fact, node),
           _literal_trip),
    Family("impurity-exact", "facts.purity.Purity vs Dataflow (impurity plain and with the lists appended to; "
           "concrete_use of a for target or a while's counters; function_impurity plain and with "
           "its parameters as arrays; block_impurity of each if arm and of a conditional expression): reason and "
           "node, for each loop, function, if and conditional expression", "exact", _purity_candidates,
           _impurity_on_ast, _impurity_on_libcst),
    Family("array-like-exact", "facts.purity.Purity.is_array_like vs Dataflow.is_array_like (a name's through "
           "facts.predicates), for each expression read in the module", "exact", _all_expressions,
           _array_like_on_ast, lambda s, node: s.context.dataflow.is_array_like(node)),
]  # fmt: skip
BY_NAME = {family.name: family for family in FAMILIES}


def classify(direction: str, on_ast: object, on_libcst: object) -> str:
    """agree, imprecise or unsound (see the module's docstring)."""
    if direction == "exact":  # one fact on two trees: any difference is a drift
        return "agree" if on_ast == on_libcst else "unsound"
    if direction == "kind":
        exact = (on_libcst is Kind.TRACED, on_libcst is Kind.STATIC)
        if tuple(on_ast) == exact:
            return "agree"
        return "unsound" if any(want and not may for want, may in zip(exact, on_ast)) else "imprecise"
    if bool(on_ast) == bool(on_libcst):
        return "agree"
    wrong = not on_ast if direction == "may" else bool(on_ast)
    return "unsound" if wrong else "imprecise"


def shown(value: object) -> str:
    if isinstance(value, Kind):
        return value.name
    if isinstance(value, tuple) and len(value) == 2:  # (may be TRACED, may be STATIC)
        return ("T" if value[0] else "-") + ("S" if value[1] else "-")
    return str(value)


@dataclass(frozen=True)
class Pair:
    """One candidate's two answers and their class."""

    path: str
    line: int
    column: int  # in characters, from 1 (as jaxfix prints positions)
    family: str
    verdict: str
    on_ast: str
    on_libcst: str
    code: str = ""  # the candidate's code, shortened: two nodes may start at one place (`x` of `x.y`)

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}:{self.column} {self.family} `{self.code}`"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column} {self.family} ast={self.on_ast} cst={self.on_libcst} `{self.code}`"


def compare_file(sides: Sides, families: Iterable[Family]) -> Iterator[Pair]:
    for family in families:
        for node in family.candidates(sides):
            line, column = sides.bridge.point(node.lineno, node.col_offset)
            pair = partial(_pair, sides, node, family.name, line, column + 1)
            spelled = sides.bridge.cst_of(family.place(node))
            if spelled is None:
                yield pair("unmapped", "", "")
                continue
            try:
                on_ast = family.on_ast(sides, node)
            except Exception as error:  # noqa: BLE001 - a measurement: report the failure and go on
                yield pair("error", repr(error), "")
                continue
            try:
                on_libcst = family.on_libcst(sides, spelled)
            except Exception as error:  # noqa: BLE001
                yield pair("error", shown(on_ast), repr(error))
                continue
            yield pair(classify(family.direction, on_ast, on_libcst), shown(on_ast), shown(on_libcst))


def _pair(sides: Sides, node: ast.AST, family: str, line: int, column: int, verdict: str, on_ast: str, on_libcst: str) -> Pair:
    code = _code(sides.text, node) if verdict != "agree" else ""  # `ast.get_source_segment` reads the whole text
    return Pair(sides.path, line, column, family, verdict, on_ast, on_libcst, code)


def _code(text: str, node: ast.AST, limit: int = 40) -> str:
    """The first line of `node`'s code, at most `limit` characters."""
    code = (ast.get_source_segment(text, node) or "").split("\n", 1)[0].strip()
    return code if len(code) <= limit else code[: limit - 3] + "..."


def compare(paths: Iterable[str], families: Iterable[Family] = FAMILIES, relative_to: Path | None = None) -> Iterator[Pair]:
    """Every pair of every file under `paths` (files neither side can parse are left out)."""
    families = list(families)
    for path, text, facts in _sources([str(p) for p in paths]):
        shown_path = _relative(path, relative_to)
        try:
            sides = Sides(shown_path, text, facts)
        except (SyntaxError, ValueError, RecursionError, MemoryError, cst.ParserSyntaxError):
            continue
        yield from compare_file(sides, families)


def _relative(path: str, base: Path | None) -> str:
    if base is None:
        return path
    try:
        return str(Path(path).resolve().relative_to(base))
    except ValueError:
        return path


def table(pairs: Iterable[Pair]) -> dict[str, Counter]:
    counts: dict[str, Counter] = {family.name: Counter() for family in FAMILIES}
    for pair in pairs:
        counts.setdefault(pair.family, Counter())[pair.verdict] += 1
    return counts


def render_table(counts: dict[str, Counter]) -> str:
    width = max(len(name) for name in counts)
    lines = [f"{'family':<{width}}  {'asked':>7}  " + "  ".join(f"{c:>9}" for c in CLASSES)]
    for name, found in counts.items():
        if found:
            lines.append(f"{name:<{width}}  {sum(found.values()):>7}  " + "  ".join(f"{found[c]:>9}" for c in CLASSES))
    return "\n".join(lines)


def render_classes(pairs: Iterable[Pair], most: int, examples: int = 2) -> str:
    """The commonest disagreements by family and answers (`kind ast=TS cst=TRACED`), with a few places each."""
    counts: Counter = Counter()
    places: dict[tuple, list[str]] = {}
    for pair in pairs:
        if pair.verdict in ("imprecise", "unsound"):
            group = (pair.family, pair.verdict, pair.on_ast, pair.on_libcst)
            counts[group] += 1
            found = places.setdefault(group, [])
            if len(found) < examples:
                found.append(f"{pair.path}:{pair.line}:{pair.column} `{pair.code}`")
    return "\n".join(
        f"{count:>7}  {family} {verdict} ast={on_ast} cst={on_libcst}: " + "; ".join(places[(family, verdict, on_ast, on_libcst)])
        for (family, verdict, on_ast, on_libcst), count in counts.most_common(most)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help=f"files or folders (default: {', '.join(DEFAULT_PATHS)})")
    parser.add_argument("--families", default="", help=f"comma-separated, of: {', '.join(BY_NAME)}")
    parser.add_argument("--all", action="store_true", help="list the imprecise pairs too")
    parser.add_argument("--write", help="save every listed pair, then the imprecise ones, one a line")
    parser.add_argument("--classes", type=int, default=0, metavar="N", help="the N commonest kinds of disagreement")
    options = parser.parse_args()
    wanted = [name.strip() for name in options.families.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown families: {', '.join(unknown)}")
    families = [BY_NAME[name] for name in wanted] if wanted else FAMILIES
    paths = options.paths or [str(ROOT / p) for p in DEFAULT_PATHS]
    pairs = list(compare(paths, families, ROOT if not options.paths else None))
    print(render_table(table(pairs)))
    listed = [p for p in pairs if p.verdict in ("unsound", "unmapped", "error")]
    imprecise = [p for p in pairs if p.verdict == "imprecise"]
    for pair in listed + (imprecise if options.all else []):
        print(f"{pair} [{pair.verdict}]")
    commonest = render_classes(pairs, options.classes) if options.classes else ""
    if commonest:
        print(commonest)
    if options.write:
        Path(options.write).write_text("".join(f"{p} [{p.verdict}]\n" for p in listed + imprecise), encoding="utf-8")
    return 1 if any(p.verdict == "unsound" for p in pairs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
