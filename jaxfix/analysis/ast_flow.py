"""Statement-order facts about one function's `ast`, each over-approximating what dataflow.FunctionFlow finds on
LibCST, for the screens that must stay over-approximations of the rules: which names may be live at a loop's
head or after it (`loop_liveness`), and which bindings of a name may reach a statement (`StatementOrder`).
FunctionFlow runs on a parsed LibCST module, which a screen never has (parse and run of flax's graphlib, whose
screens passed for nothing but these facts: 0.29 s of CPU)."""

from __future__ import annotations

import ast
from typing import Iterator, Sequence

from jaxfix.facts.flow import target_names  # noqa: F401 (the screens' and the project index's, from here)

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_INNER_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_OWN_SCOPES = (*_INNER_FUNCTIONS, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_MATCH = getattr(ast, "Match", ())


def loop_liveness(function: ast.AST) -> dict[int, frozenset[str]]:
    """Per loop of `function` (by id): the names that may be live at its head or after it, over-approximating
    `FunctionFlow.live_at_head(loop) | FunctionFlow.live_after(loop)` (`_Liveness`). A loop missing here (one in
    a `match` or a class body, which FunctionFlow does not walk into) may have any name live."""
    return _Liveness(function).loops


class _Liveness:
    """Backward liveness over the `ast` of one function, as FunctionFlow's `_live_statement` computes it on LibCST
    (loops to a fixpoint, `break`/`continue` to the loop's exit and head, what a `try` handler reads live
    wherever its body may raise), but with more reads and fewer kills: a statement reads every name it loads
    (nested lambdas, comprehensions and defs included), kills only the plain names it assigns outside nested
    scopes (not `del`, imports, a bare annotation, a `with` target, a walrus in a test), and every name a nested
    def, class or lambda loads, or a `global`/`nonlocal` declares, is live everywhere (FunctionFlow's
    `always_live` from captured names). It answers nothing for a function with a `match`."""

    def __init__(self, function: ast.AST) -> None:
        self.loops: dict[int, frozenset[str]] = {}
        self._frames: list[tuple[set[str], set[str]]] = []  # (live at the head, live after) of the loops around
        self._found: dict[int, set[str]] = {}
        always: set[str] = set()
        for node in ast.walk(function):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                always.update(node.names)
            elif isinstance(node, _INNER_FUNCTIONS) and node is not function:
                always.update(_loaded(node))
            elif isinstance(node, _MATCH):
                return
        self._block(function.body, set(), set())
        self.loops = {key: frozenset(live | always) for key, live in self._found.items()}

    def _block(self, statements: Sequence[ast.stmt], out: set[str], extra: set[str]) -> set[str]:
        live = out
        for statement in reversed(statements):
            live = self._statement(statement, live, extra)
        return live

    def _statement(self, statement: ast.stmt, out: set[str], extra: set[str]) -> set[str]:
        out = out | extra
        kind = type(statement)
        if kind is ast.If:
            body = self._block(statement.body, out, extra)
            return _loaded(statement.test) | body | self._block(statement.orelse, out, extra)
        if kind in _LOOPS:
            exit_live = self._block(statement.orelse, out, extra)
            if kind is ast.While:
                reads, targets = _loaded(statement.test), set()
            else:
                reads, targets = _loaded(statement.iter) | _loaded(statement.target), set(target_names(statement.target))
            head = exit_live | (reads if kind is ast.While else set())
            for _ in range(100):
                self._frames.append((head, out))
                body = self._block(statement.body, head, extra)
                self._frames.pop()
                new_head = head | (body - targets)
                if new_head == head:
                    break
                head = new_head
            self._found[id(statement)] = self._found.get(id(statement), set()) | head | out  # every pass's
            return head if kind is ast.While else reads | head
        if kind in (ast.With, ast.AsyncWith):
            reads = set().union(*(_loaded(item) for item in statement.items))
            return reads | self._block(statement.body, out, extra) | out
        if kind is ast.Try or kind.__name__ == "TryStar":
            after = self._block(statement.finalbody, out, extra)
            handlers = set(after)
            for handler in statement.handlers:
                handlers |= self._block(handler.body, after, extra) | _loaded(handler.type)
            orelse = self._block(statement.orelse, after, extra)
            return self._block(statement.body, orelse, extra | handlers) | handlers
        if kind is ast.Break:
            return (self._frames[-1][1] if self._frames else out) | extra
        if kind is ast.Continue:
            return (self._frames[-1][0] if self._frames else out) | extra
        reads = _loaded(statement)
        if kind in (ast.Return, ast.Raise):
            return reads | extra
        if kind is ast.AugAssign and type(statement.target) is ast.Name:
            reads.add(statement.target.id)
        if kind in (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr) and statement.value is not None:
            return (out - _assigned(statement)) | reads
        return out | reads


def _loaded(node: ast.AST | None) -> set[str]:
    """Every name `node` loads, nested scopes included."""
    if node is None:
        return set()
    return {inner.id for inner in ast.walk(node) if type(inner) is ast.Name and type(inner.ctx) is ast.Load}


def _assigned(statement: ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Expr) -> set[str]:
    """The plain names an assignment or expression statement binds where it runs (targets, walrus; not in an
    annotation, which FunctionFlow does not read, nor in a nested lambda or comprehension): each is among the
    writes FunctionFlow kills."""
    names: set[str] = set()
    stack: list[ast.AST] = [statement.value, *(statement.targets if type(statement) is ast.Assign else ())]
    if type(statement) in (ast.AnnAssign, ast.AugAssign):
        stack.append(statement.target)
    while stack:
        node = stack.pop()
        if type(node) is ast.Name and type(node.ctx) is ast.Store:
            names.add(node.id)
        elif not isinstance(node, _OWN_SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return names


# ---- which bindings may reach a statement --------------------------------------------------------------------


class StatementOrder:
    """The statements of one function (its blocks, not nested defs' or classes' bodies), where each stands, and
    what binds each name there, to tell which bindings may reach a statement as `FunctionFlow.reaching` finds
    them: only forward along the blocks, or back through a loop around both. It over-approximates: a `try`'s
    blocks, a `with` and every exit (`return`, `break`, an exception) are taken to let everything through."""

    def __init__(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._paths: dict[int, tuple[tuple[int, int], ...]] = {}  # statement: (id of its block, index) from the top
        self._ancestors: dict[int, tuple[ast.stmt, ...]] = {}  # statement: the statements around it, and itself
        self._fields: dict[int, tuple[type, str]] = {}  # id of a block: (type of the statement holding it, field)
        self._owners: dict[int, ast.stmt] = {}  # id of an expression-level node: its statement
        self._bindings: dict[str, list[tuple[ast.stmt, bool]]] = {}
        self._declared: set[str] = set()
        self.complete = not any(isinstance(node, _MATCH) for node in ast.walk(function))
        arguments = function.args
        self._params = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
        self._params.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
        if self.complete:
            self._block(function.body, (), ())

    def statement_of(self, node: ast.AST) -> ast.stmt | None:
        """The statement that evaluates `node` (an expression outside nested scopes of the function)."""
        return self._owners.get(id(node))

    def bindings(self, name: str) -> list[tuple[ast.stmt, bool]] | None:
        """The statements that bind `name` in the function, each with whether it is an assignment that binds it
        through its targets alone (`name = value`, `a, name = value`, `name: T = value`); None where the name is
        a parameter or `global`/`nonlocal`, or bound nowhere here (FunctionFlow's reaching gives no statement
        then), or the function has a `match` (its patterns' bindings are not collected)."""
        if not self.complete or name in self._params or name in self._declared:
            return None
        return self._bindings.get(name)

    def may_reach(self, binding: ast.stmt, use: ast.stmt) -> bool:
        """Whether what `binding` binds may reach the start of `use`: forward along the blocks (an earlier
        statement of a block, a statement around `use`, a loop's body before its `else`), or through a loop
        around both (`use` itself, a `while` whose test sees what its body binds)."""
        if any(isinstance(s, _LOOPS) for s in self._common(binding, use)):
            return True
        first, second = self._paths[id(binding)], self._paths[id(use)]
        for (block, index), (other, other_index) in zip(first, second):
            if block != other:
                kind, field = self._fields[block]
                other_field = self._fields[other][1]
                if kind is ast.If:
                    return False  # `body` and `orelse`: one or the other
                if kind in _LOOPS:
                    return field == "body" and other_field == "orelse"
                return True  # a `try`'s blocks: any order
            if index != other_index:
                return index < other_index
        return len(first) < len(second)  # a statement around `use` (`for`, `with`, an `if` test's walrus)

    def _common(self, first: ast.stmt, second: ast.stmt) -> Iterator[ast.stmt]:
        for a, b in zip(self._ancestors[id(first)], self._ancestors[id(second)]):
            if a is not b:
                return
            yield a

    def _block(self, block: list[ast.stmt], path: tuple, ancestors: tuple) -> None:
        for index, statement in enumerate(block):
            here = (*path, (id(block), index))
            around = (*ancestors, statement)
            self._paths[id(statement)] = here
            self._ancestors[id(statement)] = around
            self._own_nodes(statement)
            if isinstance(statement, _DEFS):
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if inner:
                    self._fields[id(inner)] = (type(statement), field)
                    self._block(inner, here, around)
            for handler in getattr(statement, "handlers", ()):
                self._fields[id(handler.body)] = (type(statement), "handler")
                self._block(handler.body, here, around)

    def _own_nodes(self, statement: ast.stmt) -> None:
        """Map the statement's own expression nodes to it and record what it binds."""
        plain: set[str] = set()
        if type(statement) is ast.Assign or (type(statement) is ast.AnnAssign and statement.value is not None):
            targets = statement.targets if type(statement) is ast.Assign else [statement.target]
            plain = {name for target in targets for name in target_names(target)}
        bound: set[str] = set()
        if isinstance(statement, _DEFS):
            bound.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        elif isinstance(statement, (ast.Global, ast.Nonlocal)):
            self._declared.update(statement.names)
        elif type(statement) is ast.AnnAssign and statement.value is None:
            pass  # `x: int` binds nothing (FunctionFlow neither)
        walrus: set[str] = set()
        stack: list[tuple[ast.AST, bool]] = [(child, False) for child in ast.iter_child_nodes(statement)]
        while stack:
            node, in_comprehension = stack.pop()
            if isinstance(node, ast.stmt):
                continue  # a block's statement, or a nested def's body
            if type(node) is ast.Lambda:  # its defaults run here, its body later in a scope of its own
                stack.extend((default, in_comprehension) for default in (*node.args.defaults, *node.args.kw_defaults) if default)
                continue
            self._owners[id(node)] = statement
            kind = type(node)
            if kind is ast.Name and type(node.ctx) is not ast.Load and not in_comprehension:
                if not (type(statement) is ast.AnnAssign and statement.value is None):
                    bound.add(node.id)
            elif kind is ast.NamedExpr and type(node.target) is ast.Name:
                walrus.add(node.target.id)
            elif kind is ast.ExceptHandler and node.name:
                bound.add(node.name)
            stack.extend((child, in_comprehension or kind in _COMPREHENSIONS) for child in ast.iter_child_nodes(node))
        for name in bound | walrus:
            self._bindings.setdefault(name, []).append((statement, name in plain and name not in walrus))
