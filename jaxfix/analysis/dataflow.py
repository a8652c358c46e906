"""AutoGraph-style dataflow over LibCST statements, shared by every codemod that turns a loop or a branch into a
function (`lax.fori_loop`, `lax.scan`, `lax.while_loop`, `lax.cond`).

Four layers, each usable alone:
- `activity(stmt)`: the names a statement reads, writes, deletes, and mutates through an attribute or a
  subscript (`x.a = v`, `x[i] += v`: mutations of `x`, recorded apart from writes). `x += v` reads `x`.
  A compound statement's activity is that of its header and everything nested in it, but not the bodies of
  nested functions and classes: those contribute the names they capture (read at an unknown later time).
- `FunctionFlow(function)`: liveness (which names may still be read after a statement: any read later in the
  function before a certain overwrite counts; in a loop, reads in the body count for the next iteration; names
  captured by closures, `global`/`nonlocal` names, and everything under `locals()`/`eval` are always live) and
  reaching definitions (which bindings may reach a statement, `UNDEFINED` standing for "not yet bound").
- `loop_flow(flow, loop)`: the loop-carried names = modified in the body ∩ (live at the loop head ∪ live after
  the loop), and which of them are not definitely defined before the loop (AutoGraph's
  `_get_block_basic_vars` and its "must be defined before the loop" check).
- `Dataflow.impurity(...)` and `Dataflow.concrete_use(...)`: what stops a loop body from becoming a function
  that JAX traces once: jumps out of the body, side effects, mutation of outside objects, calls to anything not
  known to be pure; and uses of a name (the loop index) that need a Python int where a tracer would arrive.
Everything answers with a reason a diagnostic can show. Unknown means "do not rewrite".
The purity layer (`impurity`, `block_impurity`, `function_impurity`, `call_blocker`, `concrete_use`,
`is_array_like`) is written on `ast` too, in jaxfix/facts/purity.py, for the rules as they move onto `check`;
benchmarks/agreement.py's `impurity-exact` and `array-like-exact` compare the two.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence, Union

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.summaries import by_method_name, summary_of
from jaxfix.analysis.syntax import AT_METHODS, body_statements, code_children, param_names, target_names, terminal_parts
from jaxfix.analysis.traced import TRANSFORMS, Kind
from jaxfix.facts.knowledge.jax import ALL, IMPURE_PREFIXES, PURE_CALLS, PURE_PREFIXES
from jaxfix.facts.knowledge.jax import INDEX_ACCEPTING as _INDEX_FRIENDLY
from jaxfix.facts.knowledge.jax import SEQUENCE_ACCEPTING as _ACCEPTS_SEQUENCES  # noqa: F401 (the screen's)
from jaxfix.facts.knowledge.jax import ARRAY_EVIDENCE_ATTRIBUTES as _ARRAY_EVIDENCE_ATTRIBUTES, ARRAY_METHODS  # noqa: F401
from jaxfix.facts.flow import Activity, NameUses, unique as _unique
from jaxfix.facts.loops import LoopFlow, carried_by
from jaxfix.facts.knowledge.tables import CALL_SUMMARIES
from jaxfix.facts.model import ModuleModel
from jaxfix.facts.knowledge.python import (
    COLLECTING_METHODS, FRESH_CONTAINER_CALLS, IO_BUILTINS, MUTATING_METHODS, PURE_BUILTINS, READING_METHODS,
)
from jaxfix.facts.purity import HIGHER_ORDER, returns_one_array

FunctionLike = Union[cst.FunctionDef, cst.Lambda, cst.Module]
Loop = Union[cst.For, cst.While]


class _Undefined:
    """The reaching definition that stands for "not bound on this path" (function entry, `del`)."""

    def __repr__(self) -> str:
        return "UNDEFINED"


class Parameter:
    def __init__(self, param: cst.Param) -> None:
        self.param = param

    def __repr__(self) -> str:
        return f"PARAM({self.param.name.value})"


UNDEFINED = _Undefined()
Source = Union[cst.CSTNode, _Undefined, Parameter]
"""A reaching definition: the value expression of `name = value`, the Param node of a parameter (wrapped), the
statement for any other binding (`a, b = ...`, `x += 1`, `for x in ...`, `import x`, `def x`), or UNDEFINED."""


# ---- activity ------------------------------------------------------------------------------------------------


class _Collector(NameUses):
    """Accumulates an Activity while walking statements and expressions (LibCST's)."""

    # -- expressions

    def expression(self, expr: cst.CSTNode | None) -> None:
        if expr is not None:
            _ExpressionReads(self).read(expr)

    def target(self, target: cst.BaseExpression) -> None:
        """A binding target: names are written; attributes and subscripts mutate their root (and read it)."""
        if isinstance(target, cst.Name):
            self.writes.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.target(element.value)
        elif isinstance(target, cst.StarredElement):
            self.target(target.value)
        elif isinstance(target, (cst.Attribute, cst.Subscript)):
            self._store_into(target)
        else:
            self.expression(target)

    def _store_into(self, target: cst.Attribute | cst.Subscript) -> None:
        self.expression(target.value)
        if isinstance(target, cst.Subscript):
            for element in target.slice:
                self.expression(element.slice)
        root = root_name(target)
        if root is not None:
            self.mutations.append(root)

    # -- statements

    def statement(self, stmt: cst.CSTNode, *, deep: bool) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small)
        elif isinstance(stmt, cst.SimpleStatementSuite):
            for small in stmt.body:
                self.small(small)
        elif isinstance(stmt, cst.BaseSmallStatement):
            self.small(stmt)
        elif isinstance(stmt, cst.If):
            self.expression(stmt.test)
            if deep:
                self.block(stmt.body)
                if stmt.orelse is not None:
                    self.statement(stmt.orelse, deep=True)
        elif isinstance(stmt, cst.Else):
            if deep:
                self.block(stmt.body)
        elif isinstance(stmt, cst.While):
            self.expression(stmt.test)
            if deep:
                self.block(stmt.body)
                if stmt.orelse is not None:
                    self.block(stmt.orelse.body)
        elif isinstance(stmt, cst.For):
            self.expression(stmt.iter)
            self.target(stmt.target)
            if deep:
                self.block(stmt.body)
                if stmt.orelse is not None:
                    self.block(stmt.orelse.body)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                self.expression(item.item)
                if item.asname is not None:
                    self.target(item.asname.name)
            if deep:
                self.block(stmt.body)
        elif isinstance(stmt, cst.Try) or isinstance(stmt, getattr(cst, "TryStar", ())):
            for handler in stmt.handlers:
                self.expression(handler.type)
                if handler.name is not None:
                    self.target(handler.name.name)
            if deep:
                self.block(stmt.body)
                for handler in stmt.handlers:
                    self.block(handler.body)
                if stmt.orelse is not None:
                    self.block(stmt.orelse.body)
                if stmt.finalbody is not None:
                    self.block(stmt.finalbody.body)
        elif isinstance(stmt, cst.FunctionDef):
            for decorator in stmt.decorators:
                self.expression(decorator.decorator)
            _parameter_reads(stmt.params, self)
            if stmt.returns is not None:
                self.expression(stmt.returns.annotation)
            self.captured.extend(free_names(stmt))
            self.writes.append(stmt.name.value)
        elif isinstance(stmt, cst.ClassDef):
            for decorator in stmt.decorators:
                self.expression(decorator.decorator)
            for arg in (*stmt.bases, *stmt.keywords):
                self.expression(arg.value)
            # A class body runs at once: everything it reads is read here (its own bindings included, which
            # only makes more names live).
            inner = _Collector()
            inner.block(stmt.body)
            self.reads.extend(inner.reads)
            self.captured.extend(inner.captured)
            self.opaque |= inner.opaque
            self.writes.append(stmt.name.value)
        elif isinstance(stmt, getattr(cst, "Match", ())):
            # Patterns bind names; reading every name and binding none is the conservative summary.
            for node in _walk(stmt):
                if isinstance(node, cst.Name):
                    self.reads.append(node.value)
        else:  # an unknown statement: read every name in it
            for node in _walk(stmt):
                if isinstance(node, cst.Name):
                    self.reads.append(node.value)

    def block(self, block: cst.BaseSuite) -> None:
        for stmt in block.body:
            self.statement(stmt, deep=True)

    def small(self, small: cst.BaseSmallStatement) -> None:
        if isinstance(small, cst.Assign):
            self.expression(small.value)
            for target in small.targets:
                self.target(target.target)
        elif isinstance(small, cst.AnnAssign):
            # The annotation of a local variable is never evaluated; only the value is.
            if small.value is not None:
                self.expression(small.value)
                self.target(small.target)
            elif isinstance(small.target, (cst.Attribute, cst.Subscript)):
                self.expression(small.target.value)
        elif isinstance(small, cst.AugAssign):
            if isinstance(small.target, cst.Name):
                self.reads.append(small.target.value)
            self.expression(small.value)
            self.target(small.target)
        elif isinstance(small, cst.Del):
            self._delete(small.target)
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            self.declared.extend(item.name.value for item in small.names)
        elif isinstance(small, cst.Import):
            for alias in small.names:
                self.writes.append(_import_binding(alias))
        elif isinstance(small, cst.ImportFrom):
            if not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    self.writes.append(_import_binding(alias))
        elif isinstance(small, cst.Return):
            self.expression(small.value)
        elif isinstance(small, cst.Raise):
            self.expression(small.exc)
            if small.cause is not None:
                self.expression(small.cause.item)
        elif isinstance(small, cst.Assert):
            self.expression(small.test)
            self.expression(small.msg)
        elif isinstance(small, cst.Expr):
            self.expression(small.value)
        # Pass, Break, Continue: nothing

    def _delete(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.deletes.append(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._delete(element.value)
        elif isinstance(target, (cst.Attribute, cst.Subscript)):
            self._store_into(target)
        else:
            self.expression(target)


_OPAQUE_CALLS = frozenset({"locals", "vars", "eval", "exec", "dir"})


class _ExpressionReads:
    """Names an expression reads where it is evaluated. Lambdas passed straight to a call are taken to run
    during that call (`jax.tree.map(lambda p: p * lr, params)`); any other lambda may run later, so its free
    names are captured. Comprehensions run at once; their own targets are not reads.

    It walks the expression itself, calling its `visit_X` methods in the order a LibCST visitor would (a
    method returning False skips the children), and skips whitespace and punctuation, where no name lies:
    the expressions of 10 real libraries' checks took 0.12 s of CPU under LibCST's traversal, 0.04 s so."""

    def __init__(self, collector: _Collector) -> None:
        self.c = collector

    def read(self, node: cst.CSTNode) -> None:
        visit = _READERS.get(type(node))
        if visit is not None and not visit(self, node):
            return
        for child in code_children(node):
            self.read(child)

    def visit_Name(self, node: cst.Name) -> bool:
        self.c.reads.append(node.value)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self.read(node.value)  # `.attr` is not a name read
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        if isinstance(node.func, cst.Name) and node.func.value in _OPAQUE_CALLS:
            self.c.opaque = True
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if isinstance(node.value, cst.Lambda):
            self.c.reads.extend(_lambda_reads(node.value, self.c))
        else:
            self.read(node.value)  # the keyword is not a name read
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.c.captured.extend(_lambda_reads(node, self.c))
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        self.read(node.value)
        self.c.target(node.target)
        return False

    def _comprehension(self, node, parts: Sequence[cst.BaseExpression]) -> bool:
        clause = node.for_in
        self.read(clause.iter)  # the first iterable runs in the enclosing scope
        inner = _Collector()
        bound: list[str] = []
        first = True
        while clause is not None:
            if not first:
                inner.expression(clause.iter)
            first = False
            bound.extend(n for n in target_names(clause.target))
            for condition in clause.ifs:
                inner.expression(condition.test)
            clause = clause.inner_for_in
        for part in parts:
            inner.expression(part)
        self.c.reads.extend(n for n in inner.reads if n not in bound)
        self.c.writes.extend(inner.writes)  # walrus targets bind in the enclosing scope
        self.c.captured.extend(n for n in inner.captured if n not in bound)
        self.c.opaque |= inner.opaque
        return False

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_SetComp(self, node: cst.SetComp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> bool:
        return self._comprehension(node, [node.elt])

    def visit_DictComp(self, node: cst.DictComp) -> bool:
        return self._comprehension(node, [node.key, node.value])


# node type -> its `visit_X` method (LibCST's node classes have no subclasses: the type names the method)
_READERS = {getattr(cst, name[len("visit_"):]): method for name, method in vars(_ExpressionReads).items() if name.startswith("visit_")}


def _lambda_reads(node: cst.Lambda, outer: _Collector) -> list[str]:
    """The free names of a lambda (its default values are read where it is defined)."""
    _parameter_reads(node.params, outer, annotations=False)
    inner = _Collector()
    inner.expression(node.body)
    params = set(param_names(node.params))
    outer.opaque |= inner.opaque
    return [n for n in (*inner.reads, *inner.captured) if n not in params]


def _parameter_reads(params: cst.Parameters, collector: _Collector, *, annotations: bool = True) -> None:
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    if isinstance(params.star_arg, cst.Param):
        every.append(params.star_arg)
    if params.star_kwarg is not None:
        every.append(params.star_kwarg)
    for param in every:
        if param.default is not None:
            collector.expression(param.default)
        if annotations and param.annotation is not None:
            collector.expression(param.annotation.annotation)


def _import_binding(alias: cst.ImportAlias) -> str:
    if alias.asname is not None:
        return target_names(alias.asname.name)[0]
    name = alias.name
    while isinstance(name, cst.Attribute):
        name = name.value
    return name.value


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes under `node` in lexical order, less whitespace and punctuation (no search here looks there)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(code_children(current)))


def activity(node: cst.CSTNode, *, deep: bool = True) -> Activity:
    """What a statement (with its nested blocks when `deep`), a block, or an expression reads and writes."""
    collector = _Collector()
    if isinstance(node, cst.BaseSuite):
        collector.block(node)
    elif isinstance(node, (cst.BaseStatement, cst.BaseSmallStatement, cst.Else)):
        collector.statement(node, deep=deep)
    else:
        collector.expression(node)
    return collector.activity()


def block_activity(statements: Sequence[cst.CSTNode]) -> Activity:
    collector = _Collector()
    for stmt in statements:
        collector.statement(stmt, deep=True)
    return collector.activity()


def free_names(function: cst.FunctionDef | cst.Lambda) -> tuple[str, ...]:
    """Names a nested function reads from enclosing scopes (or modifies through `nonlocal`)."""
    if isinstance(function, cst.Lambda):
        return _unique(_lambda_reads(function, _Collector()))
    inner = _Collector()
    inner.block(function.body)
    declared_global = set()
    nonlocal_names = set()
    for node in _walk(function.body):
        if isinstance(node, cst.Global):
            declared_global.update(item.name.value for item in node.names)
        elif isinstance(node, cst.Nonlocal):
            nonlocal_names.update(item.name.value for item in node.names)
    bound = (set(param_names(function.params)) | set(inner.writes) | set(inner.deletes)) - nonlocal_names
    names = [n for n in (*inner.reads, *inner.captured) if n not in bound and n not in declared_global]
    return _unique([*names, *sorted(nonlocal_names)])






def root_name(expr: cst.BaseExpression) -> str | None:
    """`x` for `x`, `x.a.b`, `x[i].a`, `x.at[i]`; None when the root is not a name (`f().a`)."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


@dataclass(frozen=True)
class BlockFlow:
    """What a block of statements needs and gives when it becomes a function body of its own."""

    live_in: frozenset[str]  # names it may read (or leave live, per `live_out`) before writing them
    defined: frozenset[str]  # names bound on every path that reaches its end (not those that return or raise)
    writes: tuple[str, ...]  # names it binds anywhere, in order of appearance


def block_flow(statements: Sequence[cst.CSTNode], live_out: Iterable[str] = ()) -> BlockFlow:
    """Liveness and definite assignment of `statements` taken alone, as if they were a function body followed
    by a read of `live_out` (the names a branch function returns)."""
    start = cst.SimpleStatementLine(body=[cst.Pass()])
    names = list(live_out)
    reader = cst.SimpleStatementLine(
        body=[cst.Expr(cst.Tuple([cst.Element(cst.Name(n)) for n in names]) if names else cst.Name("None"))]
    )
    flow = FunctionFlow(cst.Module(body=[start, *statements, reader]))
    writes = block_activity(statements)
    return BlockFlow(
        live_in=flow.live_after(start),
        defined=frozenset(n for n in writes.writes if flow.defined_before(reader, n)),
        writes=writes.writes,
    )


# ---- one function: liveness and reaching definitions ---------------------------------------------------------

State = dict  # name -> frozenset[Source]; None stands for "unreachable"


def _merge(a: State | None, b: State | None) -> State | None:
    if a is None:
        return b
    if b is None:
        return a
    return {name: a.get(name, frozenset()) | b.get(name, frozenset()) for name in a.keys() | b.keys()}


@dataclass
class _LoopFrame:
    head: set[str]  # liveness: live at the loop head (continue target)
    out: set[str]  # liveness: live after the loop (break target)
    breaks: list = field(default_factory=list)  # reaching: states at `break`
    continues: list = field(default_factory=list)  # reaching: states at `continue`


class FunctionFlow:
    """Liveness and reaching definitions over the statements of one function body (or a module, or a lambda)."""

    def __init__(self, function: FunctionLike) -> None:
        self.function = function
        if isinstance(function, cst.Module):
            self.statements: Sequence[cst.CSTNode] = function.body
            params: list[cst.Param] = []
        elif isinstance(function, cst.Lambda):
            self.statements = ()
            params = _all_params(function.params)
        else:
            self.statements = body_statements(function.body)
            params = _all_params(function.params)
        whole = block_activity(self.statements)
        self.declared = frozenset(whole.declared)
        self.opaque = whole.opaque
        self.parameters = tuple(p.name.value for p in params)
        self.locals = frozenset((set(self.parameters) | set(whole.writes) | set(whole.deletes)) - self.declared)
        self.always_live = frozenset(set(whole.captured) | self.declared)
        self._everything = frozenset(set(whole.reads) | set(whole.writes) | self.locals | self.always_live)
        self._live_after: dict[cst.CSTNode, set[str]] = {}
        self._head_live: dict[cst.CSTNode, set[str]] = {}
        self._reaching: dict[cst.CSTNode, State] = {}
        self._shallow: dict[cst.CSTNode, Activity] = {}
        self._loops: list[_LoopFrame] = []
        self._try_collectors: list[list[State]] = []
        self._live_block(self.statements, set(), set())
        entry: State = {name: frozenset({UNDEFINED}) for name in self.locals}
        for param in params:
            entry[param.name.value] = frozenset({Parameter(param)})
        self._loops = []
        self._forward_block(self.statements, entry)

    # ---- queries -----------------------------------------------------------------------------------------

    def live_after(self, stmt: cst.CSTNode) -> frozenset[str]:
        """Names that may be read after `stmt` finishes (within this function) before being overwritten."""
        if self.opaque:
            return self._everything
        return frozenset(self._live_after.get(stmt, self._everything)) | self.always_live

    def live_at_head(self, loop: Loop) -> frozenset[str]:
        """Names that may be read at the start of an iteration (in this or a later iteration, or after the loop)
        before being overwritten; a `for` loop's own targets excluded, a `while` test's reads included."""
        if self.opaque:
            return self._everything
        return frozenset(self._head_live.get(loop, self._everything)) | self.always_live

    def reaching(self, stmt: cst.CSTNode, name: str) -> frozenset[Source]:
        """The bindings of `name` that may reach the start of `stmt` (UNDEFINED: a path where it is unbound).
        Empty for names that are not local to the function, and for unreachable statements."""
        state = self._reaching.get(stmt)
        if state is None:
            return frozenset()
        return state.get(name, frozenset())

    def defined_before(self, stmt: cst.CSTNode, name: str) -> bool:
        """Whether `name` is bound on every path to `stmt` (a name not local to the function counts as bound
        only if it is a parameter-free global/enclosing name: callers decide what that means for them)."""
        if name not in self.locals:
            return name not in self.declared
        sources = self.reaching(stmt, name)
        return bool(sources) and UNDEFINED not in sources

    # ---- liveness (backward) -----------------------------------------------------------------------------

    def _activity(self, stmt: cst.CSTNode) -> Activity:
        found = self._shallow.get(stmt)
        if found is None:
            found = self._shallow[stmt] = activity(stmt, deep=False)
        return found

    def _live_block(self, statements: Sequence[cst.CSTNode], out: set[str], extra: set[str]) -> set[str]:
        live = set(out)
        for stmt in reversed(statements):
            live = self._live_statement(stmt, live, extra)
        return live

    def _live_statement(self, stmt: cst.CSTNode, out: set[str], extra: set[str]) -> set[str]:
        """Live before `stmt` given `out` live after it; `extra` is live wherever an exception may go."""
        out = out | extra
        self._live_after[stmt] = out
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            live = set(out)
            for small in reversed(stmt.body):
                live = self._live_small(small, live, extra)
            return live
        act = self._activity(stmt)
        if isinstance(stmt, cst.If):
            body = self._live_block(body_statements(stmt.body), out, extra)
            orelse = self._live_else(stmt.orelse, out, extra)
            return set(act.reads) | body | orelse
        if isinstance(stmt, cst.For):
            exit_live = self._live_else(stmt.orelse, out, extra)
            targets = set(act.writes)
            head = set(exit_live)
            for _ in range(100):
                frame = _LoopFrame(head, out)
                self._loops.append(frame)
                body = self._live_block(body_statements(stmt.body), head, extra)
                self._loops.pop()
                new_head = exit_live | (body - targets)
                if new_head == head:
                    break
                head = new_head
            self._head_live[stmt] = head
            return set(act.reads) | head
        if isinstance(stmt, cst.While):
            exit_live = self._live_else(stmt.orelse, out, extra)
            test = set(act.reads)
            head = test | exit_live
            for _ in range(100):
                frame = _LoopFrame(head, out)
                self._loops.append(frame)
                body = self._live_block(body_statements(stmt.body), head, extra)
                self._loops.pop()
                new_head = test | exit_live | body
                if new_head == head:
                    break
                head = new_head
            self._head_live[stmt] = head
            return head
        if isinstance(stmt, cst.With):
            body = self._live_block(body_statements(stmt.body), out, extra)
            # A context manager may swallow an exception and skip the rest of the body: `out` stays live.
            return set(act.reads) | (body - set(act.writes)) | out
        if isinstance(stmt, cst.Try) or isinstance(stmt, getattr(cst, "TryStar", ())):
            after = out
            if stmt.finalbody is not None:
                after = self._live_block(body_statements(stmt.finalbody.body), out, extra)
            handlers: set[str] = set()
            for handler in stmt.handlers:
                handlers |= self._live_block(body_statements(handler.body), after, extra)
            handlers |= set(act.reads) | after  # handler types are read; an unhandled exception reaches finally
            orelse = after if stmt.orelse is None else self._live_block(body_statements(stmt.orelse.body), after, extra)
            body = self._live_block(body_statements(stmt.body), orelse, extra | handlers)
            return body | handlers
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return (out - set(act.writes)) | set(act.reads)
        return out | set(act.reads)  # match and unknown statements: no kills

    def _live_else(self, orelse, out: set[str], extra: set[str]) -> set[str]:
        if orelse is None:
            return set(out)
        if isinstance(orelse, cst.If):
            return self._live_statement(orelse, out, extra)
        return self._live_block(body_statements(orelse.body), out, extra)

    def _live_small(self, small: cst.BaseSmallStatement, out: set[str], extra: set[str]) -> set[str]:
        if isinstance(small, cst.Break):
            return set(self._loops[-1].out) | extra if self._loops else set(out)
        if isinstance(small, cst.Continue):
            return set(self._loops[-1].head) | extra if self._loops else set(out)
        act = activity(small)
        if isinstance(small, (cst.Return, cst.Raise)):
            return set(act.reads) | extra
        return (out - set(act.writes) - set(act.deletes)) | set(act.reads)

    # ---- reaching definitions (forward) ------------------------------------------------------------------

    def _record(self, stmt: cst.CSTNode, state: State | None) -> None:
        if state is None:
            return
        self._reaching[stmt] = _merge(self._reaching.get(stmt), state)  # loops record every iteration's state
        for collector in self._try_collectors:
            collector.append(state)

    def _forward_block(self, statements: Sequence[cst.CSTNode], state: State | None) -> State | None:
        for stmt in statements:
            state = self._forward_statement(stmt, state)
        return state

    def _bind(self, state: State, names: Iterable[str], source: Source) -> State:
        state = dict(state)
        for name in names:
            if name in self.locals:
                state[name] = frozenset({source})
        return state

    def _forward_statement(self, stmt: cst.CSTNode, state: State | None) -> State | None:
        self._record(stmt, state)
        if state is None:
            return None
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                state = self._forward_small(small, state)
                if state is None:
                    return None
            return state
        act = self._activity(stmt)
        if isinstance(stmt, cst.If):
            state = self._bind(state, act.writes, stmt)  # walrus in the test
            body = self._forward_block(body_statements(stmt.body), state)
            if stmt.orelse is None:
                return _merge(body, state)
            if isinstance(stmt.orelse, cst.If):
                return _merge(body, self._forward_statement(stmt.orelse, state))
            return _merge(body, self._forward_block(body_statements(stmt.orelse.body), state))
        if isinstance(stmt, (cst.For, cst.While)):
            entry = state
            if isinstance(stmt, cst.For):
                entry = self._bind(state, _walrus_in(stmt.iter), stmt)
            head = entry
            frame = _LoopFrame(set(), set())
            for _ in range(100):
                frame = _LoopFrame(set(), set())
                self._loops.append(frame)
                body_entry = head
                if isinstance(stmt, cst.For):
                    body_entry = self._bind(head, target_names(stmt.target), stmt)
                else:
                    body_entry = self._bind(head, act.writes, stmt)
                end = self._forward_block(body_statements(stmt.body), body_entry)
                self._loops.pop()
                new_head = entry
                for other in (end, *frame.continues):
                    new_head = _merge(new_head, other)
                if new_head == head:
                    break
                head = new_head
            exhausted = head if isinstance(stmt, cst.For) else self._bind(head, act.writes, stmt)
            after = exhausted
            if stmt.orelse is not None:
                after = self._forward_block(body_statements(stmt.orelse.body), exhausted)
            for other in frame.breaks:
                after = _merge(after, other)
            return after
        if isinstance(stmt, cst.With):
            entry = self._bind(state, act.writes, stmt)
            collector: list[State] = [entry]
            self._try_collectors.append(collector)
            end = self._forward_block(body_statements(stmt.body), entry)
            self._try_collectors.pop()
            result = end
            for seen in collector:  # a context manager may swallow an exception anywhere in the body
                result = _merge(result, seen)
            return result
        if isinstance(stmt, cst.Try) or isinstance(stmt, getattr(cst, "TryStar", ())):
            collector = [state]
            self._try_collectors.append(collector)
            end = self._forward_block(body_statements(stmt.body), state)
            self._try_collectors.pop()
            raised: State | None = None
            for seen in collector:
                raised = _merge(raised, seen)
            if end is not None:
                raised = _merge(raised, end)
            outcomes: State | None = None
            for handler in stmt.handlers:
                names = target_names(handler.name.name) if handler.name is not None else []
                entry = self._bind(raised, names, handler)
                outcomes = _merge(outcomes, self._forward_block(body_statements(handler.body), entry))
            normal = end
            if stmt.orelse is not None:
                normal = self._forward_block(body_statements(stmt.orelse.body), end)
            outcomes = _merge(outcomes, normal)
            if stmt.finalbody is not None:
                final = body_statements(stmt.finalbody.body)
                self._forward_block(final, raised)  # what the finally block sees on the way out of an exception
                outcomes = self._forward_block(final, outcomes)
            return outcomes
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return self._bind(state, act.writes, stmt)
        return state

    def _forward_small(self, small: cst.BaseSmallStatement, state: State) -> State | None:
        if isinstance(small, cst.Break):
            if self._loops:
                self._loops[-1].breaks.append(state)
            return None
        if isinstance(small, cst.Continue):
            if self._loops:
                self._loops[-1].continues.append(state)
            return None
        if isinstance(small, (cst.Return, cst.Raise)):
            return None
        act = activity(small)
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            state = self._bind(state, [w for w in act.writes if w != small.targets[0].target.value], small)
            return self._bind(state, [small.targets[0].target.value], small.value)
        if isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
            return self._bind(state, act.writes, small.value)
        state = self._bind(state, act.writes, small)
        state = dict(state)
        for name in act.deletes:
            if name in self.locals:
                state[name] = frozenset({UNDEFINED})
        return state


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    every = [*params.posonly_params, *params.params]
    if isinstance(params.star_arg, cst.Param):
        every.append(params.star_arg)
    every.extend(params.kwonly_params)
    if params.star_kwarg is not None:
        every.append(params.star_kwarg)
    return every


def _walrus_in(expr: cst.BaseExpression) -> tuple[str, ...]:
    return activity(expr).writes


# ---- loops ---------------------------------------------------------------------------------------------------


def loop_flow(flow: FunctionFlow, loop: Loop) -> LoopFlow:
    targets = target_names(loop.target) if isinstance(loop, cst.For) else ()
    return carried_by(flow, loop, block_activity(body_statements(loop.body)), targets)


# ---- purity and concrete uses --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Blocker:
    """Why a body cannot become a traced function: the offending node and a reason a diagnostic can show.
    `collects` marks a body that appends per-step results to an outside list (a job for `lax.scan`)."""

    node: cst.CSTNode
    reason: str
    collects: bool = False


_IO_BUILTINS = IO_BUILTINS
_PURE_BUILTINS = PURE_BUILTINS  # read by the screens too
_HIGHER_ORDER = HIGHER_ORDER
_READING_METHODS = READING_METHODS
_COLLECTING = COLLECTING_METHODS
_FRESH_CONTAINER_CALLS = FRESH_CONTAINER_CALLS
_BUILTIN_NAMES = frozenset(dir(builtins))


class Dataflow:
    """Per-module entry point: flows per function, loop facts, purity of bodies and of same-module functions."""

    def __init__(self, context: ModuleModel) -> None:
        self._context = context
        self._names = context.names
        self._flows: dict[cst.CSTNode, FunctionFlow] = {}
        self._function_purity: dict[cst.CSTNode, Blocker | None] = {}
        self._checking: set[cst.CSTNode] = set()

    @property
    def _scopes(self):
        return self._context.wrapper.resolve(ScopeProvider)

    # ---- flows ---------------------------------------------------------------------------------------------

    def enclosing_function(self, node: cst.CSTNode) -> FunctionLike:
        parents = self._context.parents
        current = parents.get(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda)):
            current = parents.get(current)
        return current if current is not None else self._context.module

    def flow(self, function: FunctionLike) -> FunctionFlow:
        found = self._flows.get(function)
        if found is None:
            found = self._flows[function] = FunctionFlow(function)
        return found

    def loop(self, loop: Loop) -> LoopFlow:
        return loop_flow(self.flow(self.enclosing_function(loop)), loop)

    def captured_carries(self, flow: LoopFlow) -> tuple[str, ...]:
        """The carried names of a loop that a nested function or stored lambda of the enclosing function reads
        (`def g(): return 2 * x` before `for ...: x = g()`). Once the body is a function of its own, `x` there is
        a local of that function: the closure still reads the outer `x`, which the loop no longer updates."""
        function = self.enclosing_function(flow.loop)
        statements = body_statements(function.body) if isinstance(function, cst.FunctionDef) else ()
        captured = set(block_activity(statements).captured)
        return tuple(name for name in flow.carried if name in captured)

    # ---- purity --------------------------------------------------------------------------------------------

    def impurity(
        self,
        loop: Loop,
        flow: LoopFlow | None = None,
        *,
        appendable: Iterable[str] = (),
    ) -> Blocker | None:
        """What stops the body of `loop` from running as a traced function once per trip: None if nothing.
        `appendable` names outside lists whose `.append(v)` calls a codemod turns into outputs (lax.scan's
        stacked results): those calls are not counted; the caller checks every other use of the lists."""
        flow = flow or self.loop(loop)
        statements = body_statements(loop.body)
        fresh = self._fresh_names(statements, exclude=flow.live_in)
        walker = _PurityWalker(self, fresh=fresh, loop_body=True, appendable=frozenset(appendable))
        for stmt in statements:
            stmt.visit(walker)
            if walker.blocker is not None:
                return walker.blocker
        if isinstance(loop, cst.For) and loop.orelse is not None:
            return Blocker(loop.orelse, "is followed by an `else:` clause")
        return None

    def block_impurity(self, statements: Sequence[cst.CSTNode], *, outside: Iterable[str]) -> Blocker | None:
        """What stops a block that is not a loop body (a branch of an `if`) from becoming a function JAX traces,
        by the rules of `impurity`: jumps, I/O, calls not known to be pure, stores into objects from outside
        the block. The `return`s that end it (a last `return`, or one at the end of every branch of a last `if`)
        are left to the caller: their values and the tests leading to them are walked.
        `outside`: names whose values come from outside the block, so that a container they hold is not fresh."""
        fresh = self._fresh_names(statements, exclude=outside)
        walker = _PurityWalker(self, fresh=fresh, loop_body=True, place="the branch")
        for part in terminal_parts(statements):
            part.visit(walker)
            if walker.blocker is not None:
                return walker.blocker
        return None

    def function_impurity(
        self, function: cst.FunctionDef | cst.Lambda, *, arrays: frozenset[str] = frozenset()
    ) -> Blocker | None:
        """Why calling a same-module function may have an effect (None: its body is pure). Recursion is
        assumed pure while its cycle is being checked. `arrays` names locals the caller knows to hold JAX
        arrays (JF301: the rows a function is mapped over), whose array methods (`x.sum()`) are pure even
        where the traced analysis cannot tell; such a check is not cached."""
        if arrays:
            return self._check_function(function, arrays)
        if function in self._function_purity:
            return self._function_purity[function]
        if function in self._checking:
            return None
        self._checking.add(function)
        try:
            blocker = self._check_function(function)
        finally:
            self._checking.discard(function)
        self._function_purity[function] = blocker
        return blocker

    def _check_function(self, function: cst.FunctionDef | cst.Lambda, arrays: frozenset[str] = frozenset()) -> Blocker | None:
        if isinstance(function, cst.Lambda):
            walker = _PurityWalker(self, fresh=frozenset(), loop_body=False, arrays=arrays)
            function.body.visit(walker)
            return walker.blocker
        for decorator in function.decorators:
            expr = decorator.decorator
            callee = self._names.callee(expr) if isinstance(expr, cst.Call) else self._names.qualified(expr)
            if callee not in TRANSFORMS and callee != "functools.partial":
                return Blocker(decorator, f"is decorated with `{self._context.code_for(expr)}`")
        statements = body_statements(function.body)
        fresh = self._fresh_names(statements, exclude=frozenset(param_names(function.params)))
        walker = _PurityWalker(self, fresh=fresh, loop_body=False, arrays=arrays)
        for stmt in statements:
            stmt.visit(walker)
            if walker.blocker is not None:
                return walker.blocker
        return None

    def _fresh_names(self, statements: Sequence[cst.CSTNode], exclude: Iterable[str]) -> frozenset[str]:
        """Names every binding of which (within `statements`) makes a new container nobody else holds."""
        excluded = set(exclude)
        verdict: dict[str, bool] = {}
        for stmt in statements:
            for node in _walk(stmt):
                if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    continue
                if isinstance(node, cst.Assign):
                    fresh = _is_fresh_container(node.value, self._names)
                    for target in node.targets:
                        for name in target_names(target.target):
                            plain = isinstance(target.target, cst.Name)
                            verdict[name] = verdict.get(name, True) and fresh and plain
                elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.WithItem)):
                    if isinstance(node, cst.WithItem):
                        target = node.asname.name if node.asname is not None else None
                    else:
                        target = node.target
                    if target is not None:
                        for name in target_names(target):
                            verdict[name] = False
        return frozenset(name for name, fresh in verdict.items() if fresh and name not in excluded)

    def call_blocker(self, call: cst.Call, fresh: frozenset[str], arrays: frozenset[str] = frozenset()) -> Blocker | None:
        """What in `call` may have an effect. `arrays`: names known to hold JAX arrays (see function_impurity)."""
        func = call.func
        if isinstance(func, cst.Name) and self._names.is_builtin(func, func.value):
            name = func.value
            if name in _IO_BUILTINS:
                return Blocker(call, f"does I/O (`{name}`)")
            if name not in _PURE_BUILTINS:
                return Blocker(call, f"calls `{name}`, which is not known to be pure")
            return self._function_arguments_blocker(call, name)
        qualified = self._names.qualified(func)
        if qualified is not None:
            if qualified.startswith(IMPURE_PREFIXES) or qualified in ("jax.pure_callback",):
                if qualified.startswith("jax.debug.") or "save" in qualified or "load" in qualified:
                    return Blocker(call, f"does I/O (`{qualified}`)")
                return Blocker(call, f"calls `{qualified}`, which is not known to be pure")
            if qualified.startswith(PURE_PREFIXES) or qualified in PURE_CALLS or qualified in TRANSFORMS:
                return self._function_arguments_blocker(call, qualified)
            if qualified in CALL_SUMMARIES:  # a library call whose summary says what it returns: pure
                return self._function_arguments_blocker(call, None)
            return Blocker(call, f"calls `{qualified}`, which is not known to be pure")
        if isinstance(func, cst.Name):
            for definition in self._local_definitions(func):
                blocker = self.function_impurity(definition)
                if blocker is not None:
                    return Blocker(call, f"calls `{func.value}`, which {blocker.reason}")
                return self._function_arguments_blocker(call, None)
            return Blocker(call, f"calls `{func.value}`, which is not known to be pure")
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = func.value
            root = root_name(receiver)
            shown = self._context.code_for(receiver)
            if _is_at(receiver) and method in AT_METHODS:
                return None  # x.at[i].add(v) returns a new array
            if summary_of(self._context, call) is not None or (
                by_method_name(call) is not None and self._kind(receiver) is Kind.TRACED
            ):
                return self._function_arguments_blocker(call, None)  # `tx.update(g, s)`, `state.apply_gradients(...)`
            if method in MUTATING_METHODS and not (isinstance(receiver, cst.Name) and receiver.value in fresh):
                return Blocker(
                    call, f"changes `{shown}` with `.{method}()`", collects=method in _COLLECTING and root is not None
                )
            if method in ARRAY_METHODS and method not in MUTATING_METHODS:
                if self._kind(receiver) is Kind.TRACED or (root is not None and root in arrays):
                    return None
            if method in _READING_METHODS or (isinstance(receiver, cst.Name) and receiver.value in fresh):
                return None
            return Blocker(call, f"calls `{shown}.{method}()`, which is not known to be pure")
        if isinstance(func, cst.Call):  # jax.vmap(f)(x), partial(f, a)(x)
            inner = self._names.callee(func)
            if inner in TRANSFORMS or inner == "functools.partial":
                return self.call_blocker(func, fresh)
        return Blocker(call, f"calls `{self._context.code_for(func)}`, which is not known to be pure")

    def _function_arguments_blocker(self, call: cst.Call, callee: str | None) -> Blocker | None:
        """The functions a higher-order call receives must be pure too."""
        positions, keywords = _HIGHER_ORDER.get(callee or "", ((), ()))
        for index, arg in enumerate(call.args):
            is_function = (arg.keyword is None and index in positions) or (
                arg.keyword is not None and arg.keyword.value in keywords
            )
            if is_function:
                blocker = self._function_value_blocker(arg.value)
                if blocker is not None:
                    return blocker
            elif isinstance(arg.value, cst.Name):
                # A same-module function handed to anything may be called by it.
                for definition in self._local_definitions(arg.value):
                    blocker = self.function_impurity(definition)
                    if blocker is not None:
                        return Blocker(call, f"passes `{arg.value.value}`, which {blocker.reason}")
        return None

    def _function_value_blocker(self, expr: cst.BaseExpression) -> Blocker | None:
        if isinstance(expr, cst.Lambda):
            return None  # its body is walked with the rest
        if isinstance(expr, (cst.List, cst.Tuple)):
            for element in expr.elements:
                blocker = self._function_value_blocker(element.value)
                if blocker is not None:
                    return blocker
            return None
        if isinstance(expr, cst.Call):
            return self.call_blocker(expr, frozenset())
        qualified = self._names.qualified(expr)
        if qualified is not None:
            if qualified.startswith(PURE_PREFIXES) and not qualified.startswith(IMPURE_PREFIXES):
                return None
            return Blocker(expr, f"passes `{qualified}`, which is not known to be pure")
        if isinstance(expr, cst.Name):
            if self._names.is_builtin(expr, expr.value) and expr.value in _PURE_BUILTINS:
                return None
            for definition in self._local_definitions(expr):
                blocker = self.function_impurity(definition)
                return None if blocker is None else Blocker(expr, f"passes `{expr.value}`, which {blocker.reason}")
        return Blocker(expr, f"passes `{self._context.code_for(expr)}`, which is not known to be pure")

    def local_function(self, name: cst.BaseExpression) -> cst.FunctionDef | cst.Lambda | None:
        """The same-module `def` or lambda that a name refers to, when it is bound exactly once (JF301 checks
        what a function it maps does with its batched parameters)."""
        if not isinstance(name, cst.Name):
            return None
        found = self._local_definitions(name)
        return found[0] if found else None

    def _local_definitions(self, name: cst.Name) -> list[cst.FunctionDef | cst.Lambda]:
        """The same-module function a name refers to, if it is bound exactly once, to a `def` or a lambda."""
        scope = self._scopes.get(name)
        if scope is None:
            return []
        assignments = list(scope[name.value])
        if len(assignments) != 1:
            return []
        node = getattr(assignments[0], "node", None)
        if isinstance(node, cst.FunctionDef):
            return [node]
        if isinstance(node, cst.Name):
            parent = self._context.parents.get(node)
            if isinstance(parent, cst.AssignTarget):
                assign = self._context.parents.get(parent)
                if isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Lambda) and len(assign.targets) == 1:
                    return [assign.value]
        return []

    def _kind(self, expr: cst.BaseExpression) -> Kind:
        try:
            return self._context.traced.kind(expr)
        except KeyError:  # not inside a function the traced analysis knows
            return Kind.UNKNOWN

    # ---- concrete uses -------------------------------------------------------------------------------------

    def concrete_use(
        self,
        loop: Loop,
        names: Iterable[str],
        is_array: Callable[[cst.BaseExpression], bool] | None = None,
        *,
        also: Sequence[cst.CSTNode] = (),
    ) -> Blocker | None:
        """The first use in the body of `loop` that needs one of `names` (say the loop index) to be a Python
        int, which it stops being when the body becomes a traced function: a Python `if`/`and`/`not`, a slice
        bound, an index into something not known to be a JAX array, `range(i)`, `int(i)`, an f-string, a call
        to anything not known to accept a traced integer there, or `n ** i` (int32 overflow). Names assigned
        from such values in the body are followed. None when every use works with a traced integer.

        `also` are more nodes to search (a `while` test, the rest of the function)."""
        is_array = is_array or self.is_array_like
        tainted = set(names)
        statements = [*body_statements(loop.body), *also]
        for _ in range(20):
            grown = False
            for occurrence in self._name_loads(statements, tainted):
                outcome = self._climb(occurrence, tainted, is_array)
                if isinstance(outcome, Blocker):
                    return outcome
                if outcome - tainted:
                    tainted |= outcome
                    grown = True
            if not grown:
                return None
        return None

    def _name_loads(self, statements: Sequence[cst.CSTNode], names: set[str]) -> Iterator[cst.Name]:
        for stmt in statements:
            for node in _walk(stmt):
                if isinstance(node, cst.Name) and node.value in names and self._is_load(node):
                    yield node

    def _is_load(self, name: cst.Name) -> bool:
        parent = self._context.parents.get(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is name:
            return False
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign)) and getattr(parent, "target", None) is name:
            return False
        if isinstance(parent, cst.AnnAssign) and parent.target is name:
            return False
        if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName, cst.NameItem)):
            return False
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.target is name:
            return False
        if isinstance(parent, cst.NamedExpr) and parent.target is name:
            return False
        if isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            # inside an assignment target (`a, i = ...`) it is a store
            current = parent
            while isinstance(current, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
                child, current = current, self._context.parents.get(current)
            is_target = getattr(current, "target", None) is child
            if isinstance(current, (cst.AssignTarget, cst.For, cst.CompFor)) and is_target:
                return False
        return True

    def _climb(self, name: cst.Name, tainted: set[str], is_array) -> set[str] | Blocker:
        """Follow a use of a tainted name outwards until its value is consumed.
        Returns names that now hold an index-derived value (assignment targets), or a Blocker."""
        parents = self._context.parents
        child: cst.CSTNode = name
        shown = name.value

        def blocked(node: cst.CSTNode, what: str) -> Blocker:
            snippet = " ".join(self._context.code_for(node).split())
            if len(snippet) > 60:
                snippet = snippet[:57] + "..."
            return Blocker(node, f"uses `{shown}` as a Python int ({what}: `{snippet}`)")

        while True:
            parent = parents.get(child)
            if parent is None:
                return set()
            if isinstance(parent, cst.BinaryOperation):
                other = parent.right if parent.left is child else parent.left
                if isinstance(other, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
                    return blocked(parent, "string formatting")
                if isinstance(parent.operator, cst.Power) and parent.right is child:
                    if not (isinstance(parent.left, cst.Float) or self._kind(parent.left) is Kind.TRACED):
                        return blocked(parent, "an integer power overflows int32")
                if self._kind(other) is Kind.TRACED and self._mentions(other, tainted) is False:
                    return set()  # combined with a traced array: the result is an array, not a Python int
                child = parent
                continue
            if isinstance(parent, cst.UnaryOperation):
                if isinstance(parent.operator, cst.Not):
                    return blocked(parent, "a truth value")
                child = parent
                continue
            if isinstance(parent, cst.ComparisonTarget):
                if isinstance(parent.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
                    return blocked(parents.get(parent), "a membership or identity test")
                child = parents.get(parent)
                continue
            if isinstance(parent, cst.Comparison):
                if any(isinstance(c.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for c in parent.comparisons):
                    return blocked(parent, "a membership or identity test")
                operands = [parent.left, *(c.comparator for c in parent.comparisons)]
                if any(self._kind(o) is Kind.TRACED and self._mentions(o, tainted) is False for o in operands):
                    return set()  # compared with a traced array: a traced boolean array either way
                child = parent
                continue
            if isinstance(parent, (cst.Element, cst.Tuple, cst.List)) and not isinstance(parent, cst.StarredElement):
                child = parent
                continue
            if isinstance(parent, cst.Index):
                element = parents.get(parent)
                subscript = parents.get(element)
                if isinstance(subscript, cst.Subscript):
                    base = subscript.value
                    if isinstance(base, cst.Attribute) and base.attr.value == "at":
                        base = base.value
                    if is_array(base):
                        return set()
                    return blocked(subscript, "an index into something not known to be a JAX array")
                return blocked(parent, "an index")
            if isinstance(parent, (cst.Slice, cst.SubscriptElement)):
                return blocked(parents.get(parents.get(parent)) or parent, "a slice bound; use lax.dynamic_slice")
            if isinstance(parent, cst.Subscript) and parent.value is child:
                child = parent  # an element of an index-derived tuple
                continue
            if isinstance(parent, cst.Arg):
                call = parents.get(parent)
                if isinstance(call, cst.Call) and parent.value is child and self._accepts_traced(call, parent):
                    return set()
                callee = self._context.code_for(call.func) if isinstance(call, cst.Call) else "a call"
                return blocked(call, f"an argument of `{callee}`")
            if isinstance(parent, cst.Assign) and parent.value is child:
                found: set[str] = set()
                for target in parent.targets:
                    if not isinstance(target.target, (cst.Name, cst.Tuple, cst.List)):
                        return blocked(parent, "stored in an attribute or item")
                    found.update(target_names(target.target))
                return found
            if isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.value is child:
                if not isinstance(parent.target, cst.Name):
                    return blocked(parent, "stored in an attribute or item")
                return {parent.target.value}
            if isinstance(parent, cst.Expr):
                return set()
            if isinstance(parent, cst.IfExp):
                if parent.test is child:
                    return blocked(parent, "a truth value")
                child = parent
                continue
            if isinstance(parent, cst.Lambda) and parent.body is child:
                return set()  # a lambda's result goes wherever the lambda is called: JAX functions, in practice
            if isinstance(parent, cst.DictElement) and parent.value is child:
                child = parents.get(parent)
                continue
            if isinstance(parent, (cst.If, cst.While, cst.Assert, cst.BooleanOperation)):
                return blocked(parent if not isinstance(parent, (cst.If, cst.While)) else child, "a truth value")
            if isinstance(parent, (cst.FormattedStringExpression,)):
                return blocked(parent, "string formatting")
            return blocked(parent, "a use that may need a Python value")

    @staticmethod
    def _mentions(expr: cst.CSTNode, names: set[str]) -> bool:
        return any(isinstance(node, cst.Name) and node.value in names for node in _walk(expr))

    def _accepts_traced(self, call: cst.Call, arg: cst.Arg) -> bool:
        if isinstance(call.func, cst.Name) and self._names.is_builtin(call.func, call.func.value):
            callee = call.func.value
        else:
            callee = self._names.callee(call)
        if callee is None:
            return False
        positions, keywords = _INDEX_FRIENDLY.get(callee, ((), ()))
        if arg.keyword is not None:
            return arg.keyword.value in keywords
        if arg.star:
            return False
        index = [a for a in call.args if a.keyword is None].index(arg)
        return ALL in positions or index in positions

    def is_array_like(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` surely holds a JAX array (not a list, tuple or dict), as far as cheap evidence goes."""
        if isinstance(expr, cst.Subscript):
            plain = all(isinstance(e.slice, (cst.Index, cst.Slice)) for e in expr.slice)
            return plain and self.is_array_like(expr.value)
        if isinstance(expr, cst.Call):
            callee = self._names.callee(expr)
            if callee is not None:
                return returns_one_array(callee)
            if isinstance(expr.func, cst.Attribute):
                receiver = expr.func.value
                if _is_at(receiver) and expr.func.attr.value in AT_METHODS:
                    return True
                return expr.func.attr.value in ARRAY_METHODS and self.is_array_like(receiver)
            return False
        if isinstance(expr, cst.BinaryOperation):
            return self.is_array_like(expr.left) or self.is_array_like(expr.right)
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("T", "mT", "real", "imag"):
            return self.is_array_like(expr.value)
        if isinstance(expr, cst.Name):
            return self._name_is_array(expr)
        return False

    def _name_is_array(self, name: cst.Name) -> bool:
        try:
            if self._context.arrays.is_array(name):
                return True
        except Exception:  # pragma: no cover - the array analysis is best effort here
            pass
        if self._kind(name) is not Kind.TRACED:
            return False
        scope = self._scopes.get(name)
        if scope is None:
            return False
        assignments = list(scope[name.value])
        if not assignments:
            return False
        parents = self._context.parents
        for assignment in assignments:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.Param):
                continue
            if not isinstance(node, cst.Name):
                return False
            holder = parents.get(node)
            if isinstance(holder, cst.AssignTarget):
                value = parents.get(holder).value
                if isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
                    return False  # a container, not an array
            elif isinstance(holder, cst.AugAssign):
                continue
            else:
                return False
        # Evidence: the name is used the way only arrays are (an array attribute, or an array function's
        # operand where lists are rejected).
        for access in scope.accesses[name.value]:
            node = access.node
            parent = parents.get(node)
            if isinstance(parent, cst.Attribute) and parent.value is node:
                if parent.attr.value in _ARRAY_EVIDENCE_ATTRIBUTES:
                    return True
            if isinstance(parent, cst.Arg) and parent.keyword is None:
                call = parents.get(parent)
                if isinstance(call, cst.Call):
                    callee = self._names.callee(call)
                    if callee is not None and callee.startswith("jax.numpy.") and callee not in _ACCEPTS_SEQUENCES:
                        return True
        return False


class _PurityWalker(cst.CSTVisitor):
    """Finds the first thing in a loop body (or a function body) that is not a pure computation."""

    def __init__(
        self,
        dataflow: Dataflow,
        *,
        fresh: frozenset[str],
        loop_body: bool,
        appendable: frozenset[str] = frozenset(),
        place: str | None = None,
        arrays: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__()
        self.dataflow = dataflow
        self.fresh = fresh
        self.appendable = appendable
        self.arrays = arrays
        self.loop_body = loop_body
        self.place = place  # how messages name the block ("the loop", "the function", "the branch")
        self.blocker: Blocker | None = None
        self.loop_depth = 0
        self.function_depth = 0

    def _fail(self, node: cst.CSTNode, reason: str, collects: bool = False) -> bool:
        if self.blocker is None:
            self.blocker = Blocker(node, reason, collects)
        return False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.blocker is not None:
            return False
        return super().on_visit(node)

    # jumps and scope statements
    def visit_Break(self, node: cst.Break) -> bool:
        if self.loop_body and self.loop_depth == 0:
            return self._fail(node, "has `break`")
        return True

    def visit_Continue(self, node: cst.Continue) -> bool:
        if self.loop_body and self.loop_depth == 0:
            return self._fail(node, "has `continue`")
        return True

    def visit_Return(self, node: cst.Return) -> bool:
        if self.loop_body and self.function_depth == 0:
            return self._fail(node, "has `return`")
        return True

    def visit_Yield(self, node: cst.Yield) -> bool:
        return self._fail(node, "has `yield`")

    def visit_Await(self, node: cst.Await) -> bool:
        return self._fail(node, "has `await`")

    def visit_Global(self, node: cst.Global) -> bool:
        return self._fail(node, "has `global`")

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        return self._fail(node, "has `nonlocal`")

    def visit_Del(self, node: cst.Del) -> bool:
        if self.loop_body:
            return self._fail(node, "has `del`")
        return self._check_store(node.target, node)

    def visit_Raise(self, node: cst.Raise) -> bool:
        if self.loop_body:
            return self._fail(node, "has `raise`")
        return True

    def visit_Import(self, node: cst.Import) -> bool:
        return self._fail(node, "imports inside the body")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return self._fail(node, "imports inside the body")

    def visit_With(self, node: cst.With) -> bool:
        return self._fail(node, "has a `with` block")

    def visit_Try(self, node: cst.Try) -> bool:
        if self.loop_body:
            return self._fail(node, "has a `try` block")
        return True

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return self._fail(node, "defines a class")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if self.loop_body:
            return self._fail(node, "defines a function")
        self.function_depth += 1
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if not self.loop_body:
            self.function_depth -= 1

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.function_depth += 1
        return True

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.function_depth -= 1

    def visit_For(self, node: cst.For) -> bool:
        if node.asynchronous is not None:
            return self._fail(node, "has `async for`")
        self.loop_depth += 1
        return True

    def leave_For(self, original_node: cst.For) -> None:
        self.loop_depth -= 1

    def visit_While(self, node: cst.While) -> bool:
        self.loop_depth += 1
        return True

    def leave_While(self, original_node: cst.While) -> None:
        self.loop_depth -= 1

    def visit_Match(self, node) -> bool:  # pragma: no cover - Python 3.10+ syntax
        return self._fail(node, "has a `match` statement")

    # stores
    def visit_Assign(self, node: cst.Assign) -> bool:
        for target in node.targets:
            self._check_store(target.target, node)
        return True

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        self._check_store(node.target, node)
        return True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        self._check_store(node.target, node)
        return True

    def _check_store(self, target: cst.BaseExpression, statement: cst.CSTNode) -> bool:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._check_store(element.value, statement)
            return True
        if isinstance(target, cst.StarredElement):
            return self._check_store(target.value, statement)
        if isinstance(target, (cst.Attribute, cst.Subscript)):
            root = root_name(target)
            if root is None or root not in self.fresh:
                shown = self.dataflow._context.code_for(target)
                place = self.place or ("the loop" if self.loop_body else "the function")
                return self._fail(statement, f"assigns to `{shown}`, an object from outside {place}")
        return True

    # calls
    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "append"
            and isinstance(func.value, cst.Name)
            and func.value.value in self.appendable
        ):
            return True  # an output the caller collects; its argument is still walked
        blocker = self.dataflow.call_blocker(node, self.fresh, self.arrays)
        if blocker is not None:
            return self._fail(blocker.node, blocker.reason, blocker.collects)
        return True


def _is_at(expr: cst.BaseExpression) -> bool:
    """`x.at[...]`."""
    return isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "at"


def _is_fresh_container(expr: cst.BaseExpression, names) -> bool:
    if isinstance(expr, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in _FRESH_CONTAINER_CALLS:
        return names.is_builtin(expr.func, expr.func.value)
    return False
