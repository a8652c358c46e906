"""Liveness and reaching definitions in one function, and what a loop carries from one iteration to the next,
on `ast`: the facts the loop rules (JF101, JF102, JF103 and the scan and vmap rewrites) and JF501 read.

The answers are those of LibCST's `analysis.dataflow` (`FunctionFlow`, `loop_flow`), over the statements LibCST
holds (`flow.Lines`: a line of simple statements joined by `;` is one statement, keyed by its first; a one-line
suite is one too), so that a rule moving onto `ast` keeps its findings; benchmarks/agreement.py
(`loop-flow-exact`, `flow-exact`) compares the two on every loop and every statement. The reads and writes
are `flow.activity`'s; the reaching definitions are `flow.Reaching`'s:
- the value expression of `name = value` (and of `name: T = value`);
- a `Parameter` for a parameter of the function;
- the statement for any other binding (`a, b = ...`, `x += 1`, `for x in ...`, `with ... as x`, `import x`,
  `def x`), the `except ... as x` handler for its name;
- `UNDEFINED` where a path reaches on which the name is not bound (function entry, `del`).
A `match` reads what LibCST's reads (`match_reads`: every name it spells, captures and attributes too, where
`flow.activity` reads the names it loads), so that the names live before it are LibCST's. One difference,
LibCST's spelling: LibCST counts `None`, `True` and `False` as names read, so that they may be live there; they
are never local, and nothing here or in the rules reads them as live.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Sequence

from jaxfix.facts.flow import UNDEFINED, Activity, Lines, Parameter, Reaching, TRIES, activity, block_activity, target_names, unique  # noqa: F401
from jaxfix.facts.spelling import names_in

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_FOR = (ast.For, ast.AsyncFor)
LOOPS = (ast.For, ast.AsyncFor, ast.While)


def all_parameters(arguments: ast.arguments) -> list[ast.arg]:
    every = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]
    return [a for a in every if a is not None]


class FunctionFlow:
    """Liveness and reaching definitions over the statements of one function body (a def's, a lambda's, none, or
    the module's). Statements are LibCST's (`Lines.group`): a line is asked about by its first statement."""

    def __init__(self, function: ast.AST, lines: Lines, reaching: Reaching | None = None) -> None:
        """`reaching`: the function's reaching definitions where the caller has them (`FileFacts.reaching`)."""
        self.function = function
        self._lines = lines
        if isinstance(function, ast.Lambda):
            self.statements: Sequence[ast.stmt] = ()
            parameters = all_parameters(function.args)
        elif isinstance(function, ast.Module):
            self.statements, parameters = function.body, []
        else:
            self.statements, parameters = function.body, all_parameters(function.args)
        whole = block_activity(self.statements)
        self.declared = frozenset(whole.declared)
        self.opaque = whole.opaque
        self.parameters = tuple(p.arg for p in parameters)
        self.locals = frozenset((set(self.parameters) | set(whole.writes) | set(whole.deletes)) - self.declared)
        matched, captured = libcst_extras(self.statements)
        self.always_live = frozenset(set(whole.captured) | captured | self.declared)
        self._everything = frozenset(set(whole.reads) | matched | set(whole.writes) | self.locals | self.always_live)
        self._live_after: dict[ast.stmt, set[str]] = {}
        self._head_live: dict[ast.stmt, set[str]] = {}
        self._shallow: dict[ast.stmt, Activity] = {}
        self._loops: list[tuple[set[str], set[str]]] = []  # (live at the head, live after) of each loop we are in
        self._live_block(self.statements, set(), set())
        if reaching is None and not isinstance(function, ast.Lambda):
            reaching = Reaching(function, lines)
        self._reaching = reaching

    # ---- queries -------------------------------------------------------------------------------------------------

    def live_after(self, stmt: ast.stmt) -> frozenset[str]:
        """Names that may be read after `stmt` finishes (within this function) before being overwritten."""
        if self.opaque:
            return self._everything
        return frozenset(self._live_after.get(stmt, self._everything)) | self.always_live

    def live_at_head(self, loop: ast.stmt) -> frozenset[str]:
        """Names that may be read at the start of an iteration (in this or a later iteration, or after the loop)
        before being overwritten; a `for` loop's own targets excluded, a `while` test's reads included."""
        if self.opaque:
            return self._everything
        return frozenset(self._head_live.get(loop, self._everything)) | self.always_live

    def reaching(self, stmt: ast.stmt, name: str) -> frozenset:
        """The bindings of `name` that may reach the start of `stmt` (UNDEFINED: a path where it is unbound).
        Empty for names that are not local to the function, and for unreachable statements."""
        return self._reaching.reaching(stmt, name) if self._reaching is not None else frozenset()

    def defined_before(self, stmt: ast.stmt, name: str) -> bool:
        """Whether `name` is bound on every path to `stmt` (a name not local to the function counts as bound
        unless it is declared `global`/`nonlocal`)."""
        if name not in self.locals:
            return name not in self.declared
        sources = self.reaching(stmt, name)
        return bool(sources) and UNDEFINED not in sources

    # ---- liveness (backward) -------------------------------------------------------------------------------------

    def _activity(self, stmt: ast.stmt) -> Activity:
        found = self._shallow.get(stmt)
        if found is None:
            found = self._shallow[stmt] = activity(stmt, deep=False)
        return found

    def _live_block(self, statements: Sequence[ast.stmt], out: set[str], extra: set[str]) -> set[str]:
        live = set(out)
        for kind, group in reversed(self._lines.group(statements)):
            live = self._live_statement(kind, group, live, extra)
        return live

    def _live_else(self, orelse: Sequence[ast.stmt], out: set[str], extra: set[str]) -> set[str]:
        return self._live_block(orelse, out, extra) if orelse else set(out)

    def _live_statement(self, kind: str, group: list[ast.stmt], out: set[str], extra: set[str]) -> set[str]:  # noqa: C901
        """Live before the statement `group` (a line, a suite, a compound statement) given `out` live after it;
        `extra` is live wherever an exception may go."""
        out = out | extra
        stmt = group[0]
        self._live_after[stmt] = out
        if kind != "compound":
            live = set(out)
            for small in reversed(group):
                live = self._live_small(small, live, extra)
            return live
        act = self._activity(stmt)
        node = type(stmt)
        if node is ast.If:
            body = self._live_block(stmt.body, out, extra)
            return set(act.reads) | body | self._live_else(stmt.orelse, out, extra)
        if node in LOOPS:
            exit_live = self._live_else(stmt.orelse, out, extra)
            test = set(act.reads) if node is ast.While else set()
            targets = set(act.writes) if node is not ast.While else set()
            head = test | exit_live
            for _ in range(100):
                self._loops.append((head, out))
                body = self._live_block(stmt.body, head, extra)
                self._loops.pop()
                new_head = test | exit_live | (body - targets)
                if new_head == head:
                    break
                head = new_head
            self._head_live[stmt] = head
            return head if node is ast.While else set(act.reads) | head
        if node in (ast.With, ast.AsyncWith):
            body = self._live_block(stmt.body, out, extra)
            # A context manager may swallow an exception and skip the rest of the body: `out` stays live.
            return set(act.reads) | (body - set(act.writes)) | out
        if node in TRIES:
            after = self._live_block(stmt.finalbody, out, extra) if stmt.finalbody else out
            handlers: set[str] = set()
            for handler in stmt.handlers:
                handlers |= self._live_block(handler.body, after, extra)
            handlers |= set(act.reads) | after  # handler types are read; an unhandled exception reaches finally
            orelse = self._live_block(stmt.orelse, after, extra) if stmt.orelse else after
            body = self._live_block(stmt.body, orelse, extra | handlers)
            return body | handlers
        if node in _FUNCTIONS:
            return (out - set(act.writes)) | set(act.reads)
        if node is ast.ClassDef:
            return (out - set(act.writes)) | set(act.reads) | libcst_extras(stmt.body)[0]
        return out | set(match_reads(stmt, act))  # match and unknown statements: no kills

    def _live_small(self, small: ast.stmt, out: set[str], extra: set[str]) -> set[str]:
        kind = type(small)
        if kind is ast.Break:
            return set(self._loops[-1][1]) | extra if self._loops else set(out)
        if kind is ast.Continue:
            return set(self._loops[-1][0]) | extra if self._loops else set(out)
        act = activity(small)
        if kind is ast.Return or kind is ast.Raise:
            return set(act.reads) | extra
        return (out - set(act.writes) - set(act.deletes)) | set(act.reads)


_MATCH = getattr(ast, "Match", None)


def match_reads(statement: ast.stmt, act: Activity) -> tuple[str, ...] | set[str]:
    """The names a statement reads as LibCST's `activity` has them: a `match` every name it spells (its cases'
    bodies too), any other statement its `activity`'s reads."""
    return names_in(statement) | set(act.reads) if type(statement) is _MATCH else act.reads


def libcst_extras(statements: Sequence[ast.stmt]) -> tuple[set[str], set[str]]:
    """What LibCST's activity of `statements` reads and captures beyond `flow.activity`'s: the names the `match`
    statements among them spell (read where the match runs, in a class body too), and those of the matches in
    nested defs that the defs do not bind (captured)."""
    reads: set[str] = set()
    captured: set[str] = set()
    if _MATCH is None:
        return reads, captured
    stack = list(statements)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is _MATCH:
            reads |= names_in(node)
        elif kind in _FUNCTIONS:
            captured |= _free_match_names(node)
        elif kind is ast.ClassDef:
            inner = libcst_extras(node.body)
            reads |= inner[0]
            captured |= inner[1]
        else:
            for field in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, field, ()) if isinstance(getattr(node, field, None), list) else ())
            if isinstance(node, ast.excepthandler):
                stack.extend(node.body)
    return reads, captured


def _free_match_names(function: ast.AST) -> set[str]:
    reads, captured = libcst_extras(function.body)
    if not reads and not captured:
        return set()
    whole = block_activity(function.body)
    declared_global: set[str] = set()
    nonlocal_names: set[str] = set()
    for node in ast.walk(function):
        if type(node) is ast.Global:
            declared_global.update(node.names)
        elif type(node) is ast.Nonlocal:
            nonlocal_names.update(node.names)
    arguments = function.args
    parameters = {a.arg for a in all_parameters(arguments)}
    bound = (parameters | set(whole.writes) | set(whole.deletes)) - nonlocal_names
    return (reads | captured) - bound - declared_global


# ---- a block as a function body of its own (an `if` arm that becomes a `lax.cond` branch) -----------------------


@dataclass(frozen=True)
class BlockFlow:
    """What a block of statements needs and gives when it becomes a function body of its own."""

    live_in: frozenset[str]  # names it may read (or leave live, per `live_out`) before writing them
    defined: frozenset[str]  # names bound on every path that reaches its end (not those that return or raise)
    writes: tuple[str, ...]  # names it binds anywhere, in order of appearance


_AFTER_TEXT = 1 << 30  # a line past the end of any text: synthetic statements there join no line of the code


def _synthetic(statement: ast.stmt, line: int) -> ast.stmt:
    for node in ast.walk(statement):
        node.lineno = node.end_lineno = line
        node.col_offset, node.end_col_offset = 0, 1
    return statement


def block_flow(statements: Sequence[ast.stmt], lines: Lines, live_out: Sequence[str] = ()) -> BlockFlow:
    """Liveness and definite assignment of `statements` taken alone, as if they were a function body followed by
    a read of `live_out` (the names a branch function returns): the body of a module of `pass`, the statements
    and that read, asked of FunctionFlow (LibCST's `analysis.dataflow.block_flow` so, with LibCST's spelling that
    the read of no names reads `None`: `None`, `True` and `False` are never live here)."""
    start = _synthetic(ast.Pass(), _AFTER_TEXT)
    names = [ast.Name(name, ast.Load()) for name in live_out]
    read = ast.Tuple(names, ast.Load()) if names else ast.Constant(None)
    reader = _synthetic(ast.Expr(read), _AFTER_TEXT + 1)
    flow = FunctionFlow(ast.Module([start, *statements, reader], []), lines)
    writes = block_activity(statements).writes
    return BlockFlow(
        live_in=flow.live_after(start),
        defined=frozenset(n for n in writes if flow.defined_before(reader, n)),
        writes=writes,
    )


# ---- loops -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoopFlow:
    """What a loop carries from one iteration to the next (AutoGraph's loop variables)."""

    loop: object  # the loop's node (`ast`'s For or While; LibCST's in `analysis.dataflow`)
    targets: tuple[str, ...]  # names the `for` target binds on each iteration
    modified: tuple[str, ...]  # names the body writes or deletes (targets excluded), in order of appearance
    live_in: frozenset[str]  # live at the head of each iteration
    live_out: frozenset[str]  # live after the loop
    carried: tuple[str, ...]  # modified ∩ (live_in ∪ live_out), in order of appearance in the body
    undefined: tuple[str, ...]  # carried names not bound on every path to the loop
    mutated: tuple[str, ...]  # roots the body changes through an attribute or a subscript
    declared: tuple[str, ...]  # modified names that are `global`/`nonlocal` in the function
    targets_live_out: tuple[str, ...]  # target names read after the loop (Python leaves the last value there)


def carried_by(flow, loop, body: Activity, targets: Sequence[str]) -> LoopFlow:
    """The LoopFlow of `loop` in `flow` (a FunctionFlow, this module's or LibCST's), from what its body does and
    the names its `for` target binds."""
    targets = tuple(targets)
    order = unique([*body.reads, *body.writes, *body.deletes])
    modified_set = (set(body.writes) | set(body.deletes)) - set(targets)
    modified = tuple(n for n in order if n in modified_set)
    live_in = flow.live_at_head(loop)
    live_out = flow.live_after(loop)
    carried = tuple(n for n in modified if n in live_in or n in live_out)
    return LoopFlow(
        loop=loop,
        targets=targets,
        modified=modified,
        live_in=live_in,
        live_out=live_out,
        carried=carried,
        undefined=tuple(n for n in carried if not flow.defined_before(loop, n)),
        mutated=body.mutations,
        declared=tuple(n for n in modified if n in flow.declared),
        targets_live_out=tuple(t for t in targets if t in live_out),
    )


def loop_flow(flow: FunctionFlow, loop: ast.stmt) -> LoopFlow:
    targets = target_names(loop.target) if isinstance(loop, _FOR) else ()
    return carried_by(flow, loop, block_activity(loop.body), targets)


def enclosing_function(node: ast.AST, parents: dict, module: ast.Module) -> ast.AST:
    """The def or lambda whose body holds `node` (its signature too, as LibCST's `Dataflow.enclosing_function`
    counts it), or the module."""
    current = parents.get(node)
    while current is not None and not isinstance(current, (*_FUNCTIONS, ast.Lambda)):
        current = parents.get(current)
    return module if current is None else current


def captured_carries(flow: LoopFlow, function: ast.AST) -> tuple[str, ...]:
    """The carried names of a loop that a nested function or stored lambda of the enclosing function (a def:
    none for a lambda or the module) reads (`def g(): return 2 * x` before `for ...: x = g()`). Once the body is
    a function of its own, `x` there is a local of that function: the closure still reads the outer `x`, which
    the loop no longer updates."""
    statements = function.body if isinstance(function, _FUNCTIONS) else ()
    captured = set(block_activity(statements).captured)
    return tuple(name for name in flow.carried if name in captured)
