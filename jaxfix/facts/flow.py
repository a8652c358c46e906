"""What a statement or an expression reads and writes, on `ast`, and how a block's statements group into the
lines a fix can put a statement before: the queries every flow fact (key flow now; carry and dataflow later)
reads, written once.

The answers are those `analysis.dataflow.activity` gives on LibCST, so that a fact moving onto `ast` keeps its
findings: the same names, in order of first appearance, with LibCST's rules (a lambda passed straight to a call
runs during it, any other lambda later; a comprehension's own targets are no reads; a walrus inside one binds in
the enclosing scope; a `match` binds none). Two differences, both LibCST's spelling, not Python's: LibCST
counts `None`, `True` and `False` as names read, and in a `match` every name node (captures and attributes
too) where this reads the names the `match` loads. Children are taken in source order (`children`),
and `walk` gives LibCST's `syntax.walk` order (each node, then its children from the last), which orders the
facts that walk (which def comes first, which draw of a comprehension consumes first).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Iterator, Sequence

_SKIPPED = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)  # hold no code
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
TRIES = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
COMPOUND = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, *TRIES, ast.ClassDef, *_FUNCTIONS,
    *((ast.Match,) if hasattr(ast, "Match") else ()),
)  # fmt: skip
_OPAQUE_CALLS = frozenset({"locals", "vars", "eval", "exec", "dir"})


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def children(node: ast.AST) -> list[ast.AST]:
    """The child nodes of `node` that may hold code, in source order (`ast.iter_child_nodes` gives fields in
    order, which differs for a call's keywords, a dict, a conditional expression, a def's decorators)."""
    kind = type(node)
    if kind is ast.Call:
        return [node.func, *sorted((*node.args, *node.keywords), key=_start)]
    if kind is ast.Dict:
        found: list[ast.AST] = []
        for key, value in zip(node.keys, node.values):
            found += [value] if key is None else [key, value]
        return found
    if kind is ast.IfExp:
        return [node.body, node.test, node.orelse]
    if kind in _FUNCTIONS:
        return [*node.decorator_list, *getattr(node, "type_params", ()), node.args,
                *([node.returns] if node.returns is not None else ()), *node.body]  # fmt: skip
    if kind is ast.ClassDef:
        return [*node.decorator_list, *getattr(node, "type_params", ()),
                *sorted((*node.bases, *node.keywords), key=_start), *node.body]  # fmt: skip
    if kind is ast.arguments:
        parts = [*node.posonlyargs, *node.args, node.vararg, *node.kwonlyargs, node.kwarg, *node.defaults,
                 *node.kw_defaults]  # fmt: skip
        return sorted((part for part in parts if part is not None), key=_start)
    return [child for child in ast.iter_child_nodes(node) if not isinstance(child, _SKIPPED)]


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node`, `node` first, in LibCST's `syntax.walk` order: a stack, the last child first."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def target_names(target: ast.AST | None) -> list[str]:
    """The names an assignment target binds (`a`, `b` of `a, (b, *_) = ...`); not attributes or items."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in target_names(element)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


def parameter_names(arguments: ast.arguments) -> list[str]:
    """Every parameter name, in order: positional-only, ordinary, *args, keyword-only, **kwargs."""
    every = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]
    return [a.arg for a in every if a is not None]


def root_name(expr: ast.AST) -> str | None:
    """`x` for `x`, `x.a.b`, `x[i].a`; None when the root is not a name (`f().a`)."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


# ---- reads and writes -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Activity:
    """The names one statement (with what is nested in it) uses, each tuple in order of first appearance."""

    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    mutations: tuple[str, ...] = ()  # x.a = v, x[i] = v, x[i] += v, del x[i]: the root `x`
    captured: tuple[str, ...] = ()  # free names of nested functions and stored lambdas: read at an unknown time
    declared: tuple[str, ...] = ()  # `global`/`nonlocal` names
    opaque: bool = False  # locals()/vars()/eval()/exec(): any name may be read


def activity(node: ast.AST, *, deep: bool = True) -> Activity:
    """What a statement (with its nested blocks when `deep`) or an expression reads and writes."""
    collector = _Collector()
    if isinstance(node, ast.stmt):
        collector.statement(node, deep=deep)
    else:
        collector.expression(node)
    return collector.activity()


def block_activity(statements: Sequence[ast.stmt]) -> Activity:
    collector = _Collector()
    collector.block(statements)
    return collector.activity()


def free_names(function: ast.AST) -> tuple[str, ...]:
    """The names a nested def or lambda reads from enclosing scopes (or modifies through `nonlocal`)."""
    if isinstance(function, ast.Lambda):
        return unique(_lambda_reads(function, _Collector()))
    inner = _Collector()
    inner.block(function.body)
    declared_global: set[str] = set()
    nonlocal_names: set[str] = set()
    for statement in function.body:
        for node in walk(statement):
            if isinstance(node, ast.Global):
                declared_global.update(node.names)
            elif isinstance(node, ast.Nonlocal):
                nonlocal_names.update(node.names)
    bound = (set(parameter_names(function.args)) | set(inner.writes) | set(inner.deletes)) - nonlocal_names
    names = [n for n in (*inner.reads, *inner.captured) if n not in bound and n not in declared_global]
    return unique([*names, *sorted(nonlocal_names)])


def unique(names) -> tuple[str, ...]:
    """The names in order of first appearance, once each."""
    return tuple(dict.fromkeys(names))


class NameUses:
    """The names seen so far, in order, by kind: what an Activity is made of (the LibCST walk of
    `analysis.dataflow` accumulates into it too)."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.deletes: list[str] = []
        self.mutations: list[str] = []
        self.captured: list[str] = []
        self.declared: list[str] = []
        self.opaque = False

    def activity(self) -> Activity:
        return Activity(
            unique(self.reads), unique(self.writes), unique(self.deletes), unique(self.mutations),
            unique(self.captured), unique(self.declared), self.opaque,
        )  # fmt: skip


class _Collector(NameUses):
    """Accumulates an Activity while walking statements and expressions."""

    # -- expressions

    def expression(self, node: ast.AST | None) -> None:
        if node is None:
            return
        kind = type(node)
        if kind is ast.Name:
            self.reads.append(node.id)
        elif kind is ast.Attribute:
            self.expression(node.value)  # `.attr` is not a name read
        elif kind is ast.Lambda:
            self.captured.extend(_lambda_reads(node, self))
        elif kind is ast.NamedExpr:
            self.expression(node.value)
            self.target(node.target)
        elif kind in COMPREHENSIONS:
            self._comprehension(node)
        elif kind is ast.Call:
            if isinstance(node.func, ast.Name) and node.func.id in _OPAQUE_CALLS:
                self.opaque = True
            self.expression(node.func)
            for child in children(node)[1:]:
                self._argument(child)
        else:
            for child in children(node):
                self.expression(child)

    def _argument(self, node: ast.AST) -> None:
        """A call's callee or argument: a lambda passed straight to a call runs during it (its names are read)."""
        value = node.value if isinstance(node, (ast.keyword, ast.Starred)) else node
        if isinstance(value, ast.Lambda):
            self.reads.extend(_lambda_reads(value, self))
        else:
            self.expression(value)

    def _comprehension(self, node) -> None:
        generators = node.generators
        self.expression(generators[0].iter)  # the first iterable runs in the enclosing scope
        inner = _Collector()
        bound: list[str] = []
        for index, generator in enumerate(generators):
            if index:
                inner.expression(generator.iter)
            bound.extend(target_names(generator.target))
            for condition in generator.ifs:
                inner.expression(condition)
        for part in [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]:
            inner.expression(part)
        self.reads.extend(n for n in inner.reads if n not in bound)
        self.writes.extend(inner.writes)  # walrus targets bind in the enclosing scope
        self.captured.extend(n for n in inner.captured if n not in bound)
        self.opaque |= inner.opaque

    def target(self, target: ast.AST) -> None:
        """A binding target: names are written; attributes and subscripts mutate their root (and read it)."""
        if isinstance(target, ast.Name):
            self.writes.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.target(element)
        elif isinstance(target, ast.Starred):
            self.target(target.value)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            self._store_into(target)
        else:
            self.expression(target)

    def _store_into(self, target: ast.Attribute | ast.Subscript) -> None:
        self.expression(target.value)
        if isinstance(target, ast.Subscript):
            self.expression(target.slice)
        root = root_name(target)
        if root is not None:
            self.mutations.append(root)

    # -- statements

    def block(self, statements: Sequence[ast.stmt]) -> None:
        for statement in statements:
            self.statement(statement, deep=True)

    def statement(self, stmt: ast.stmt, *, deep: bool) -> None:  # noqa: C901 - one branch per statement type
        kind = type(stmt)
        if kind is ast.If or kind is ast.While:
            self.expression(stmt.test)
            if deep:
                self.block(stmt.body)
                self.block(stmt.orelse)
        elif kind is ast.For or kind is ast.AsyncFor:
            self.expression(stmt.iter)
            self.target(stmt.target)
            if deep:
                self.block(stmt.body)
                self.block(stmt.orelse)
        elif kind is ast.With or kind is ast.AsyncWith:
            for item in stmt.items:
                self.expression(item.context_expr)
                if item.optional_vars is not None:
                    self.target(item.optional_vars)
            if deep:
                self.block(stmt.body)
        elif kind in TRIES:
            for handler in stmt.handlers:
                self.expression(handler.type)
                if handler.name is not None:
                    self.writes.append(handler.name)
            if deep:
                self.block(stmt.body)
                for handler in stmt.handlers:
                    self.block(handler.body)
                self.block(stmt.orelse)
                self.block(stmt.finalbody)
        elif kind in _FUNCTIONS:
            for decorator in stmt.decorator_list:
                self.expression(decorator)
            _parameter_reads(stmt.args, self)
            self.expression(stmt.returns)
            self.captured.extend(free_names(stmt))
            self.writes.append(stmt.name)
        elif kind is ast.ClassDef:
            for decorator in stmt.decorator_list:
                self.expression(decorator)
            for argument in sorted((*stmt.bases, *stmt.keywords), key=_start):
                self.expression(argument.value if isinstance(argument, ast.keyword) else argument)
            # A class body runs at once: everything it reads is read here (its own bindings included, which
            # only makes more names live).
            inner = _Collector()
            inner.block(stmt.body)
            self.reads.extend(inner.reads)
            self.captured.extend(inner.captured)
            self.opaque |= inner.opaque
            self.writes.append(stmt.name)
        elif kind is ast.Assign:
            self.expression(stmt.value)
            for target in stmt.targets:
                self.target(target)
        elif kind is ast.AnnAssign:
            # The annotation of a local variable is never evaluated; only the value is.
            if stmt.value is not None:
                self.expression(stmt.value)
                self.target(stmt.target)
            elif isinstance(stmt.target, (ast.Attribute, ast.Subscript)):
                self.expression(stmt.target.value)
        elif kind is ast.AugAssign:
            if isinstance(stmt.target, ast.Name):
                self.reads.append(stmt.target.id)
            self.expression(stmt.value)
            self.target(stmt.target)
        elif kind is ast.Delete:
            for target in stmt.targets:
                self._delete(target)
        elif kind is ast.Global or kind is ast.Nonlocal:
            self.declared.extend(stmt.names)
        elif kind is ast.Import or kind is ast.ImportFrom:
            for alias in stmt.names:
                if alias.name != "*":
                    self.writes.append(alias.asname or alias.name.split(".", 1)[0])
        elif kind is ast.Return or kind is ast.Expr:
            self.expression(stmt.value)
        elif kind is ast.Raise:
            self.expression(stmt.exc)
            self.expression(stmt.cause)
        elif kind is ast.Assert:
            self.expression(stmt.test)
            self.expression(stmt.msg)
        elif kind in (ast.Pass, ast.Break, ast.Continue):
            pass
        else:  # `match` (its patterns bind names; reading every name and binding none is the conservative
            # summary) and any statement unknown here: read every name in it
            for node in walk(stmt):
                if isinstance(node, ast.Name):
                    self.reads.append(node.id)

    def _delete(self, target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.deletes.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._delete(element)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            self._store_into(target)
        else:
            self.expression(target)


def _lambda_reads(node: ast.Lambda, outer: _Collector) -> list[str]:
    """The free names of a lambda (its default values are read where it is defined)."""
    _parameter_reads(node.args, outer, annotations=False)
    inner = _Collector()
    inner.expression(node.body)
    params = set(parameter_names(node.args))
    outer.opaque |= inner.opaque
    return [n for n in (*inner.reads, *inner.captured) if n not in params]


def _parameter_reads(arguments: ast.arguments, collector: _Collector, *, annotations: bool = True) -> None:
    """A def's defaults and annotations, read where it is defined, parameter by parameter in LibCST's order
    (positional-only, ordinary, keyword-only, *args, **kwargs)."""
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    defaults = {}
    positional = [*arguments.posonlyargs, *arguments.args]
    for param, default in zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults):
        defaults[id(param)] = default
    for param, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        if default is not None:
            defaults[id(param)] = default
    for param in (p for p in every if p is not None):
        collector.expression(defaults.get(id(param)))
        if annotations:
            collector.expression(param.annotation)


# ---- lines ------------------------------------------------------------------------------------------------------


class Lines:
    """How the statements of a block group into lines, as LibCST holds them: simple statements joined by `;`
    are one line (a `SimpleStatementLine`), and those after a compound statement's colon on its own line one
    suite (`if x: a; b`), where no statement can be put before them. Read from the source text."""

    def __init__(self, text: str) -> None:
        # lines end where Python's tokenizer ends them (not at every character `str.splitlines` breaks at)
        self._lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n|$)", text.lstrip("\ufeff")) if text else []
        self._bytes: dict[int, bytes] = {}

    def _prefix(self, node: ast.AST) -> bytes:
        """The code of the node's first line before it (`ast` counts columns in UTF-8 bytes)."""
        number = node.lineno
        found = self._bytes.get(number)
        if found is None:
            found = self._bytes[number] = self._lines[number - 1].encode("utf-8") if number <= len(self._lines) else b""
        return found[: node.col_offset]

    def group(self, statements: Sequence[ast.stmt]) -> list[tuple[str, list[ast.stmt]]]:
        """The block as ("line" | "suite" | "compound", statements), in order."""
        if not statements:
            return []
        if not isinstance(statements[0], COMPOUND) and self._prefix(statements[0]).strip():
            return [("suite", list(statements))]  # after the colon of its header, on the same line
        found: list[tuple[str, list[ast.stmt]]] = []
        for statement in statements:
            if isinstance(statement, COMPOUND):
                found.append(("compound", [statement]))
            elif found and found[-1][0] == "line" and found[-1][1][-1].end_lineno == statement.lineno:
                found[-1][1].append(statement)  # after a `;`
            else:
                found.append(("line", [statement]))
        return found

    def units(self, *blocks: Sequence[ast.stmt]) -> list[list[ast.stmt]]:
        """The statements LibCST holds for `blocks` written one after the other (an arm, then the statements after
        its `if` that move into it): each block grouped on its own (`group`), so that a one-line suite stays one."""
        return [group for block in blocks for _, group in self.group(block)]

    def is_elif(self, node: ast.If) -> bool:
        """Whether an `if` that is the sole statement of another's `else` is spelled `elif`."""
        return self._prefix(node).strip() == b"" and self._lines[node.lineno - 1].encode("utf-8")[node.col_offset:].startswith(b"elif")


def sole_return(unit: Sequence[ast.stmt]) -> ast.Return | None:
    """The `return` of a LibCST statement (a unit of `Lines.units`) that is only a `return`; None otherwise."""
    return unit[0] if len(unit) == 1 and type(unit[0]) is ast.Return else None


def is_terminal(lines: Lines, units: Sequence[Sequence[ast.stmt]]) -> bool:
    """Whether every path through the statements `units` ends in a `return` they end with: a final `return`, or a
    final `if` whose every branch (an `else` included) is terminal."""
    if not units:
        return False
    last = units[-1]
    if sole_return(last) is not None:
        return True
    if len(last) == 1 and type(last[0]) is ast.If:
        statement = last[0]
        if not statement.orelse:
            return False
        return is_terminal(lines, lines.units(statement.body)) and is_terminal(lines, lines.units(statement.orelse))
    return False


def terminal_parts(lines: Lines, units: Sequence[Sequence[ast.stmt]]) -> Iterator[ast.AST]:
    """The pieces of the statements `units` to check as ordinary code: every statement but the returns that end
    a terminal block (for those, their values) and the `if` tests that lead to them."""
    terminal = is_terminal(lines, units)
    for index, unit in enumerate(units):
        if index == len(units) - 1 and terminal:
            final = sole_return(unit)
            if final is not None:
                if final.value is not None:
                    yield final.value
                return
            statement = unit[0]
            yield statement.test
            yield from terminal_parts(lines, lines.units(statement.body))
            yield from terminal_parts(lines, lines.units(statement.orelse))
            return
        yield from unit


# ---- reaching definitions: which bindings of each local may reach a line ---------------------------------------


class _Undefined:
    """The reaching definition that stands for "not bound on this path" (function entry, `del`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDEFINED"


UNDEFINED = _Undefined()


@dataclass(frozen=True)
class Parameter:
    """The reaching definition of a parameter at function entry."""

    node: ast.arg

    def __repr__(self) -> str:
        return f"PARAM({self.node.arg})"


# A reaching definition: the value expression of `name = value` (and of `name: T = value`), the Parameter of a
# parameter, the statement (or `except` handler) for any other binding (`a, b = ...`, `x += 1`, `for x in ...`,
# `import x`, `def x`, a walrus in an `if`/`while` test), or UNDEFINED.
_State = dict  # local name -> frozenset of reaching definitions; None: the point is unreachable


def _join(a: _State | None, b: _State | None) -> _State | None:
    if a is None:
        return b
    if b is None or a is b:
        return a
    merged = dict(a)
    for name, sources in b.items():
        mine = merged.get(name)
        merged[name] = sources if mine is None else mine | sources
    return merged


class Reaching:
    """Which bindings of each local may reach each line of one function body (a def's, or the module's): the
    reaching definitions of LibCST's `analysis.dataflow.FunctionFlow`, over the lines LibCST holds
    (`Lines.group`: a line's state is the one before its first statement); the same loops to a fixed point, the
    same `break`/`continue`, `try`, `with` (which may swallow an exception anywhere in its body) and `match` (not
    followed). benchmarks/agreement.py (`bound-exact`, `reaching-exact`) compares the two."""

    def __init__(self, function: ast.AST, lines: Lines) -> None:
        self._lines = lines
        if isinstance(function, ast.Module):
            statements, parameters = function.body, []
        else:
            statements, arguments = function.body, function.args
            parameters = [a for a in (*arguments.posonlyargs, *arguments.args, arguments.vararg,
                                      *arguments.kwonlyargs, arguments.kwarg) if a is not None]  # fmt: skip
        whole = block_activity(statements)
        self.declared = frozenset(whole.declared)
        names = [a.arg for a in parameters]
        self.locals = frozenset((set(names) | set(whole.writes) | set(whole.deletes)) - self.declared)
        self._at: dict[ast.stmt, _State] = {}
        self._line_of: dict[ast.stmt, ast.stmt] = {}  # each simple statement -> the first of its line
        self._loops: list[tuple[list, list]] = []  # (breaks, continues) of each loop we are in
        self._collectors: list[list] = []
        entry: _State = {name: frozenset({UNDEFINED}) for name in self.locals}
        for parameter in parameters:
            entry[parameter.arg] = frozenset({Parameter(parameter)})
        self._block(statements, entry)

    def reaching(self, statement: ast.stmt, name: str) -> frozenset:
        """The bindings of `name` that may reach the start of the line `statement` is on (UNDEFINED: a path where
        it is unbound). Empty for names that are not local to the function, and for unreachable lines."""
        state = self._at.get(self._line_of.get(statement, statement))
        if state is None:
            return frozenset()
        return state.get(name, frozenset())

    def defined_before(self, statement: ast.stmt, name: str) -> bool:
        """Whether `name` is bound on every path to the line that `statement` starts (a name not local to the
        function counts as bound unless it is declared `global`/`nonlocal`); False where no path reaches it."""
        if name not in self.locals:
            return name not in self.declared
        sources = self.reaching(statement, name)
        return bool(sources) and UNDEFINED not in sources

    def _bind(self, state: _State, names, source) -> _State:
        state = dict(state)
        for name in names:
            if name in self.locals:
                state[name] = frozenset({source})
        return state

    def _block(self, statements: Sequence[ast.stmt], state: _State | None) -> _State | None:
        for kind, group in self._lines.group(statements):
            if kind == "compound":
                state = self._compound(group[0], state)
                continue
            first = group[0]
            for statement in group:
                self._line_of[statement] = first
            self._record(first, state)
            for statement in group:
                if state is None:
                    break
                state = self._simple(statement, state)
        return state

    def _record(self, statement: ast.stmt, state: _State | None) -> None:
        if state is None:
            return
        self._at[statement] = _join(self._at.get(statement), state)  # loops record every iteration's state
        for collector in self._collectors:
            collector.append(state)

    def _simple(self, statement: ast.stmt, state: _State) -> _State | None:
        kind = type(statement)
        if kind in (ast.Break, ast.Continue):
            if self._loops:
                self._loops[-1][0 if kind is ast.Break else 1].append(state)
            return None
        if kind in (ast.Return, ast.Raise):
            return None
        act = activity(statement)
        if kind is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name:
            target = statement.targets[0].id
            state = self._bind(state, [w for w in act.writes if w != target], statement)
            return self._bind(state, [target], statement.value)
        if kind is ast.AnnAssign and statement.value is not None and type(statement.target) is ast.Name:
            return self._bind(state, act.writes, statement.value)
        state = self._bind(state, act.writes, statement)
        for name in act.deletes:
            if name in self.locals:
                state[name] = frozenset({UNDEFINED})
        return state

    def _compound(self, statement: ast.stmt, state: _State | None) -> _State | None:  # noqa: C901
        self._record(statement, state)
        if state is None:
            return None
        kind = type(statement)
        act = activity(statement, deep=False)
        if kind is ast.If:
            state = self._bind(state, act.writes, statement)  # walrus in the test
            body = self._block(statement.body, state)
            return _join(body, self._block(statement.orelse, state) if statement.orelse else state)
        if kind in (ast.For, ast.AsyncFor, ast.While):
            loop = kind is not ast.While
            entry = self._bind(state, activity(statement.iter).writes, statement) if loop else state
            head = entry
            frame: tuple[list, list] = ([], [])
            for _ in range(100):
                frame = ([], [])
                self._loops.append(frame)
                body_entry = self._bind(head, target_names(statement.target) if loop else act.writes, statement)
                end = self._block(statement.body, body_entry)
                self._loops.pop()
                new_head = entry
                for other in (end, *frame[1]):
                    new_head = _join(new_head, other)
                if new_head == head:
                    break
                head = new_head
            after = head if loop else self._bind(head, act.writes, statement)
            if statement.orelse:
                after = self._block(statement.orelse, after)
            for other in frame[0]:
                after = _join(after, other)
            return after
        if kind in (ast.With, ast.AsyncWith):
            entry = self._bind(state, act.writes, statement)
            collector = [entry]
            self._collectors.append(collector)
            result = self._block(statement.body, entry)
            self._collectors.pop()
            for seen in collector:  # a context manager may swallow an exception anywhere in the body
                result = _join(result, seen)
            return result
        if kind in TRIES:
            collector = [state]
            self._collectors.append(collector)
            end = self._block(statement.body, state)
            self._collectors.pop()
            raised = None
            for seen in collector:
                raised = _join(raised, seen)
            if end is not None:
                raised = _join(raised, end)
            outcomes = None
            for handler in statement.handlers:
                entry = None if raised is None else self._bind(raised, [handler.name] if handler.name else [], handler)
                outcomes = _join(outcomes, self._block(handler.body, entry))
            normal = self._block(statement.orelse, end) if statement.orelse else end
            outcomes = _join(outcomes, normal)
            if statement.finalbody:
                self._block(statement.finalbody, raised)  # what the finally block sees on the way out of an exception
                outcomes = self._block(statement.finalbody, outcomes)
            return outcomes
        if kind in (*_FUNCTIONS, ast.ClassDef):
            return self._bind(state, act.writes, statement)
        return state


# ---- LibCST's statements: where a node sits, which statements bind a name ----------------------------------------

_BLOCK_FIELDS = ("body", "orelse", "finalbody")


def block_of(statement: ast.stmt, parent: ast.AST) -> list[ast.stmt] | None:
    """The block (a `body`, `orelse` or `finalbody` of `parent`, a handler's or case's body) holding `statement`."""
    for field in _BLOCK_FIELDS:
        block = getattr(parent, field, None)
        if type(block) is list and any(s is statement for s in block):
            return block
    return None


def statement_of(node: ast.AST, parents: dict, lines: Lines, stop: ast.AST | None = None) -> ast.stmt | None:
    """The innermost statement holding `node` as LibCST holds statements (`node` itself if it is one): a compound
    statement, or a line (`SimpleStatementLine`), given as its first statement; the statements of a one-line
    suite (`if c: x = 1`) belong to the compound statement they follow. None where `stop` (or the module) comes
    first."""
    while node is not None and node is not stop and not isinstance(node, ast.Module):
        if isinstance(node, COMPOUND):
            return node
        if isinstance(node, ast.stmt):
            parent = parents.get(node)
            for kind, group in lines.group(block_of(node, parent) or [node]):
                if any(s is node for s in group):
                    if kind == "line":
                        return group[0]
                    break
            node = parent
            continue
        node = parents.get(node)
    return None


def _blocks(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every block of statements under `node` (nested scopes included)."""
    for found in ast.walk(node):
        for field in _BLOCK_FIELDS:
            block = getattr(found, field, None)
            if type(block) is list and block and isinstance(block[0], ast.stmt):
                yield block


def binding_statements(function: ast.AST, name: str, lines: Lines) -> int:
    """How many of LibCST's statements in `function` (a def, a lambda or the module, nested scopes included) bind
    `name`: a line (simple statements joined by `;`, but not a one-line suite's) that writes it, a `with` that
    binds it, a `for` whose target spells it (`for name.a in ...` too), a def or class of that name other than
    `function`; and one more where it is a parameter of `function` (not `*args` or `**kwargs`)."""
    count = 0
    for block in _blocks(function):
        for kind, group in lines.group(block):
            if kind == "line":
                if any(name in activity(s, deep=False).writes for s in group):
                    count += 1
                continue
            if kind != "compound":
                continue
            statement = group[0]
            if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
                count += statement.name == name and statement is not function
            elif isinstance(statement, (ast.For, ast.AsyncFor)):
                count += name in activity(statement.target).reads
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                count += name in activity(statement, deep=False).writes
    arguments = getattr(function, "args", None)
    if isinstance(arguments, ast.arguments) and any(
        a.arg == name for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
    ):
        count += 1
    return count


def top_level_bindings(module: ast.Module, lines: Lines) -> dict[str, list[ast.stmt]]:
    """Each name the module's own statements bind, with those statements as LibCST holds them (a line as its
    first statement): a def or class of the name, or a statement (a line, or a compound statement's header: a
    `for` target, a `with`'s names, a handler's name, a walrus in a test) that writes it."""
    found: dict[str, list[ast.stmt]] = {}
    for kind, group in lines.group(module.body):
        statement = group[0]
        if kind == "compound" and isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
            names: Sequence[str] = (statement.name,)
        else:
            names = unique(n for s in group for n in activity(s, deep=False).writes)
        for name in names:
            found.setdefault(name, []).append(statement)
    return found
