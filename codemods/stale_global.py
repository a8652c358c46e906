"""JF804 stale-global-in-jit: a jitted function reads a module global that the module rebinds after the function
may have run; the compiled program keeps the value it was traced with."""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.jit import jitted_functions
from jaxfix.analysis.syntax import walk
from jaxfix.codemod import Codemod, Invalid, Valid

_LOOPS = (cst.For, cst.While)
_JIT_OR_PARTIAL = frozenset({"jax.jit", "functools.partial"})
_AST_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_MATCH_NAMES = (ast.MatchAs, ast.MatchStar, ast.MatchMapping, ast.MatchClass)
_NOT_VALUES = (cst.Import, cst.ImportFrom, cst.FunctionDef, cst.ClassDef)


class StaleGlobal(Codemod):
    """
    ## What it does
    Finds a module-level function compiled with `jax.jit` that reads a module global (directly, in a function
    nested in it, or in a function of the module it calls) when the module rebinds that global where a call
    of the jitted function may already have happened: in a function that declares `global name`, or at module
    level after a use of the jitted function (or in a loop that uses it).

    ## Why is this bad?
    jit traces the function on its first call for each input shape and dtype, and a global read while tracing
    becomes a constant of the compiled program. Later calls with the same shapes run that program and never
    read the global again: after `scale = 2.0` the function still multiplies by 1.0. No error, no warning;
    results are silently stale, and they change when an unrelated call with a new shape happens to retrace.

    ## Example
    ```python
    scale = 1.0

    @jax.jit
    def apply(x):
        return x * scale

    y1 = apply(x)
    scale = 2.0
    y2 = apply(x)  # still x * 1.0
    ```

    ## Use instead
    ```python
    @jax.jit
    def apply(x, scale):
        return x * scale

    y1 = apply(x, 1.0)
    y2 = apply(x, 2.0)
    ```
    A traced argument follows every new value without recompiling; a static argument (`static_argnames`)
    recompiles once per value.

    ## Fix safety
    No fix: the function's signature and every caller change, and what the author meant (a constant, a
    setting chosen once before the first call, a value that changes) only the author knows.

    ## When it stays quiet
    Globals bound once (constants), or rebound only before the jitted function is defined, or after it is
    defined but before anything uses it, or at module level with no use of the jitted function after the
    rebinding (a notebook's later cell reusing the name `model` for another example), or after the jitted
    name itself was bound to another function; globals bound to modules, functions or classes (`import`, `def`,
    `class`) on any path; names a function binds locally; mutation of a global object (`config["lr"] = 2`,
    `state.x = 1`), which it does not track; functions traced by other transformations only.
    """

    code = "JF804"
    name = "stale-global-in-jit"
    summary = "jitted function reads a module global rebound later: the compiled function keeps the old value"
    fix_safety = None
    screen = ("jit",)

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs a module-level function that may be jitted (`_jitted`), and a global read in it or in a
        module-level function it calls by name (`_reached`) that the module binds by no import, def or class
        (`_Bindings`) and rebinds where `_rebinding` reports: in a function (`global name`), or at module level
        in a loop that uses the jitted name, or between a use of it and a later one before the name is bound
        again. Notebooks that rebind `model` or `params` from cell to cell fail the last test."""
        body = screen.tree.body
        entries = list(_jitted(screen, body))
        if not entries:
            return False
        bindings = _Bindings(body, screen.nodes_of(ast.Global, ast.NamedExpr))
        uses: dict[str, list[tuple[int, int]]] = {}
        for name, definition, functions in entries:
            for read in _reads(_reached(functions, bindings.defs)):
                if read in bindings.banned:
                    continue
                if read in bindings.declared:
                    return True
                places = bindings.places.get(read, ())
                if len(places) < 2:
                    continue
                if name not in uses:
                    uses[name] = _uses(body, name)
                if _may_rebind_late(body, places, definition, uses[name], bindings.redefinitions.get(name, [])):
                    return True
        return False

    VALID = (
        Valid("import jax\n\nSCALE = 2.0\n\n@jax.jit\ndef f(x):\n    return x * SCALE\n\ny = f(1.0)\n"),
        # rebound before the definition only
        Valid("import jax\n\nscale = 1.0\nscale = 2.0\n\n@jax.jit\ndef f(x):\n    return x * scale\n\ny = f(1.0)\n"),
        # rebound after the definition, before any use
        Valid("import jax\n\nscale = 1.0\n\n@jax.jit\ndef f(x):\n    return x * scale\n\nscale = 2.0\ny = f(1.0)\n"),
        Valid(  # rebound after the last call: nothing reads the stale value
            "import jax\n\nscale = 1.0\n\n@jax.jit\ndef f(x):\n    return x * scale\n\ny = f(1.0)\nscale = 2.0\n"
        ),
        Valid(  # the name `f` is another function by the time it is called again
            "import jax\n\nscale = 1.0\n\n@jax.jit\ndef f(x):\n    return x * scale\n\ny = f(1.0)\nscale = 2.0\n\n"
            "@jax.jit\ndef f(x):\n    return x * scale\n\nz = f(1.0)\n"
        ),
        # a module global
        Valid(
            "import jax\nimport jax.numpy as jnp\n\ntry:\n    import scipy as sp\nexcept ImportError:\n    sp = None\n\n"
            "@jax.jit\ndef f(x):\n    return jnp.sum(x) if sp is None else x\n\ny = f(1.0)\nsp = None\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\n\nscale = 1.0\n\n@jax.jit\ndef f(x):\n    return x * scale\n\ny1 = f(1.0)\nscale = 2.0\n"
            "y2 = f(1.0)\n",
            None,
            message="keeps the value",
        ),
        Invalid(
            "import jax\n\nlr = 0.1\n\n@jax.jit\ndef step(p, g):\n    return p - lr * g\n\ndef decay():\n"
            "    global lr\n    lr = lr * 0.5\n",
            None,
            message="global lr",
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        jitted = list(jitted_functions(self.context, node))
        if not jitted:
            return
        scopes = self.context.wrapper.resolve(ScopeProvider)
        self._global = scopes[node]
        self._top = {id(s): i for i, s in enumerate(node.body)}
        functions = {s.name.value: s for s in node.body if isinstance(s, cst.FunctionDef)}
        for entry in jitted:
            reached = self._reached(entry.function, functions)
            reported = set()
            for name, read in self._global_reads(reached):
                if name in reported:
                    continue
                why = self._rebinding(name, entry)
                if why is not None:
                    reported.add(name)
                    self.report(
                        read,
                        f"`{entry.name}` is compiled with jax.jit and reads the global `{name}`, which {why}: jit "
                        f"keeps the value it read when it traced `{entry.name}`, and later calls with the same "
                        f"shapes still use it; pass `{name}` as an argument",
                    )

    def _reached(self, function: cst.FunctionDef, functions: dict[str, cst.FunctionDef]) -> list[cst.FunctionDef]:
        """`function` and the module-level functions it calls by name, transitively."""
        found, todo = [function], [function]
        while todo:
            current = todo.pop()
            for n in walk(current.body):
                if isinstance(n, cst.Call) and isinstance(n.func, cst.Name):
                    callee = functions.get(n.func.value)
                    if callee is not None and callee not in found and self._is_global(n.func):
                        found.append(callee)
                        todo.append(callee)
        return found

    def _is_global(self, name: cst.Name) -> bool:
        scope = self.context.wrapper.resolve(ScopeProvider).get(name)
        return scope is not None and all(a.scope is self._global for a in scope[name.value])

    def _global_reads(self, functions: list[cst.FunctionDef]):
        """(name, read) for each module global read in the bodies of `functions`."""
        for function in functions:
            for n in walk(function.body):
                if isinstance(n, cst.Name) and n.value in self._global.assignments and self._is_read(n):
                    if self._is_global(n):
                        yield n.value, n

    def _is_read(self, name: cst.Name) -> bool:
        scope = self.context.wrapper.resolve(ScopeProvider).get(name)
        if scope is None:
            return False
        return any(access.node is name for access in scope.accesses[name.value])

    def _rebinding(self, name: str, entry) -> str | None:
        """How the module rebinds `name` where `entry` may have run already, or None."""
        # in source order: LibCST keeps assignments in a set, and the message names the first rebinding
        assignments = sorted(self._global.assignments[name], key=lambda a: self.context.source_order(a.node))
        if len(assignments) < 2:
            return None
        statements = []
        for assignment in assignments:
            node = assignment.node
            if isinstance(node, _NOT_VALUES) or isinstance(self._parents(node, 1), (cst.ImportAlias, cst.AsName)):
                return None
            statements.append((node, self._top_statement(node)))
        for node, top in statements:
            function = self.context.traced.enclosing_function(node)
            if function is not None:
                where = self.context.positions[node].start.line
                return f"`global {name}` in `{function.name.value}` rebinds (line {where})"
        definition = self._top.get(id(self._top_statement(entry.binding)))
        uses = self._uses(entry)
        redefined = self._redefinitions(entry, definition)
        for node, top in statements:
            index = self._top.get(id(top))
            if definition is None or index is None or index <= definition:
                continue
            line = self.context.positions[node].start.line
            if any(r <= index for r in redefined):
                continue  # the jitted name was bound to something else before this rebinding
            before = [u for u in uses if definition < u[0] < index or (u[0] == index and u[1] < line)]
            looped = isinstance(top, _LOOPS) and any(u[0] == index for u in uses)
            if looped:
                return f"the module rebinds at line {line}, in a loop that uses `{entry.name}`"
            # A stale value is read only by a call after the rebinding, before the name means another function
            # (a notebook's later cell that defines its own `train_step`).
            end = min((r for r in redefined if r > index), default=len(self._top))
            after = [u for u in uses if index < u[0] < end or (u[0] == index and u[1] > line)]
            if before and after:
                return (
                    f"the module rebinds at line {line}, after a use of `{entry.name}`, and uses `{entry.name}` "
                    f"again at line {after[0][1]}"
                )
        return None

    def _redefinitions(self, entry, definition: int | None) -> list[int]:
        """Module statement indexes, after the jitted function's own, that bind its name again."""
        found = []
        for assignment in self._global.assignments[entry.name]:
            index = self._top.get(id(self._top_statement(assignment.node)))
            if index is not None and definition is not None and index > definition:
                found.append(index)
        return sorted(found)

    def _uses(self, entry) -> list[tuple[int, int]]:
        """(module statement index, line) of every reference to the jitted name."""
        found = []
        for assignment in self._global.assignments[entry.name]:
            for access in assignment.references:
                top = self._top_statement(access.node)
                if id(top) in self._top:
                    found.append((self._top[id(top)], self.context.positions[access.node].start.line))
        return sorted(found)

    def _top_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        parents = self.context.parents
        while node is not None and id(node) not in self._top:
            node = parents.get(node)
        return node

    def _parents(self, node: cst.CSTNode, depth: int) -> cst.CSTNode | None:
        for _ in range(depth):
            node = self.context.parents.get(node)
        return node


def _jitted(screen, body: list[ast.stmt]):
    """(name, statement index, [functions]) of each module-level statement that `jitted_functions` may take for
    a jitted function: a def with one decorator that may be jax.jit or a `partial` of it, or `name = jax.jit(fn)`
    (the functions: the undecorated module-level defs named `fn`)."""
    may = screen.may_resolve_to
    defs = None
    for index, statement in enumerate(body):
        kind = type(statement)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef) and len(statement.decorator_list) == 1:
            decorator = statement.decorator_list[0]
            if may(decorator.func if type(decorator) is ast.Call else decorator, _JIT_OR_PARTIAL):
                yield statement.name, index, [statement]
        elif (
            kind is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name
            and type(statement.value) is ast.Call and may(statement.value.func, _JIT_OR_PARTIAL)
        ):
            positional = [a for a in statement.value.args if type(a) is not ast.Starred]
            if len(positional) != 1 or type(positional[0]) is not ast.Name:
                continue
            if defs is None:
                defs = _module_defs(body)
            functions = [f for f in defs.get(positional[0].id, ()) if not f.decorator_list]
            if functions:
                yield statement.targets[0].id, index, functions


def _module_defs(body: list[ast.stmt]) -> dict[str, list[ast.AST]]:
    found: dict[str, list[ast.AST]] = {}
    for statement in body:
        if type(statement) in (ast.FunctionDef, ast.AsyncFunctionDef):
            found.setdefault(statement.name, []).append(statement)
    return found


def _reached(functions: list[ast.AST], defs: dict[str, list[ast.AST]]) -> list[ast.AST]:
    """`functions` and the module-level defs their bodies call by name, transitively (`StaleGlobal._reached`,
    taking every def of a name the module defines more than once)."""
    found, todo = list(functions), list(functions)
    while todo:
        for statement in todo.pop().body:
            for node in ast.walk(statement):
                if type(node) is ast.Call and type(node.func) is ast.Name:
                    for callee in defs.get(node.func.id, ()):
                        if all(callee is not f for f in found):
                            found.append(callee)
                            todo.append(callee)
    return found


def _reads(functions: list[ast.AST]) -> set[str]:
    """The globals the bodies of `functions` may read (a LibCST access: a load, a `del`, an `op=` target, a
    `match` name), less the function's own locals (`_locals`) where nothing in it declares them `global`: a
    read of those, in the function or in a def, lambda, class or comprehension inside it, is no global's."""
    found = set()
    for function in functions:
        read, declared = set(), set()
        for statement in function.body:
            for node in ast.walk(statement):
                kind = type(node)
                if kind is ast.Name and type(node.ctx) is not ast.Store:
                    read.add(node.id)
                elif kind is ast.AugAssign and type(node.target) is ast.Name:
                    read.add(node.target.id)
                elif kind in _MATCH_NAMES:
                    read.update(_match_names(node))
                elif kind is ast.Global:
                    declared.update(node.names)
        found |= read - (_locals(function) - declared)
    return found


def _locals(function: ast.AST) -> set[str]:
    """Names a def binds in its own scope for sure: its parameters, and what its body binds outside the defs,
    lambdas, classes and comprehensions in it (a `:=` in a comprehension LibCST binds in the comprehension)."""
    arguments = function.args
    bound = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    bound.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    stack = list(function.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            bound.add(node.name)
            continue
        if kind is ast.Lambda or kind in _COMPREHENSIONS:
            continue
        if kind is ast.Name and type(node.ctx) is ast.Store:
            bound.add(node.id)
        elif kind in (ast.Import, ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        stack.extend(ast.iter_child_nodes(node))
    return bound


class _Bindings:
    """How the module binds each name in its global scope, as `StaleGlobal._rebinding` reads LibCST's
    assignments: `places` over-approximates where module-level code binds a name ((statement index, line, or
    None where LibCST's line may differ)); `redefinitions` under-approximates the statement indexes that surely
    bind it (a rebinding of the jitted name ends what a stale read can reach); `banned`: names that a
    module-level import, def, class, `with ... as name` or `except ... as name` binds (the rule gives up on
    them); `declared`: names that code in a def, lambda or class may bind in the global scope: those of every
    `global` and `:=` (in a decorator or default), wherever they are. LibCST binds a `:=` in a comprehension in
    the comprehension's scope, and takes a `match` capture for a read."""

    def __init__(self, body: list[ast.stmt], declarations: list[ast.AST]) -> None:
        self.defs = _module_defs(body)
        self.places: dict[str, list[tuple[int, int | None]]] = {}
        self.redefinitions: dict[str, list[int]] = {}
        self.banned: set[str] = set()
        self.declared: set[str] = set()
        for node in declarations:
            if type(node) is ast.Global:
                self.declared.update(node.names)
            elif type(node.target) is ast.Name:
                self.declared.add(node.target.id)
        for index, statement in enumerate(body):
            stack = [statement]
            while stack:
                node = stack.pop()
                kind = type(node)
                if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
                    if kind is not ast.Lambda:
                        self._ban(node.name, index)
                    continue
                if kind in _COMPREHENSIONS:
                    for inner in ast.walk(node):
                        if type(inner) is ast.Name and type(inner.ctx) is ast.Store:
                            self._may(inner.id, index, None)
                    continue
                if kind is ast.Name:
                    if type(node.ctx) is ast.Store:
                        self._may(node.id, index, node.lineno)
                        self.redefinitions.setdefault(node.id, []).append(index)
                elif kind in (ast.Import, ast.ImportFrom):
                    for alias in node.names:
                        self._ban((alias.asname or alias.name).split(".")[0], index)
                elif kind is ast.withitem and type(node.optional_vars) is ast.Name:
                    self._ban(node.optional_vars.id, index)
                elif kind is ast.ExceptHandler and node.name:
                    self._ban(node.name, index)
                stack.extend(ast.iter_child_nodes(node))

    def _may(self, name: str, index: int, line: int | None) -> None:
        self.places.setdefault(name, []).append((index, line))

    def _ban(self, name: str, index: int) -> None:
        self.banned.add(name)
        self.redefinitions.setdefault(name, []).append(index)


def _uses(body: list[ast.stmt], name: str) -> list[tuple[int, int]]:
    """(statement index, line) of every node that may be a reference to the global `name` (LibCST also records
    one for a string annotation that names it: any string that contains the name counts)."""
    found = []
    for index, statement in enumerate(body):
        for node in ast.walk(statement):
            kind = type(node)
            if kind is ast.Name:
                if node.id == name and type(node.ctx) is not ast.Store:
                    found.append((index, node.lineno))
            elif kind is ast.AugAssign:
                if type(node.target) is ast.Name and node.target.id == name:
                    found.append((index, node.target.lineno))
            elif kind is ast.Constant:
                if type(node.value) is str and name in node.value:
                    found.append((index, node.lineno))
            elif kind in _MATCH_NAMES and name in _match_names(node):
                found.append((index, node.lineno))
    return found


def _may_rebind_late(
    body: list[ast.stmt], places: list[tuple[int, int | None]], definition: int, uses: list[tuple[int, int]],
    redefinitions: list[int],
) -> bool:
    """`StaleGlobal._rebinding`'s module-level case: a binding after the jitted function's definition, before its
    name is bound again, in a loop that uses the name or between a use and a later one (a binding whose line
    LibCST may give otherwise takes every use in its statement for one before it and one after it)."""
    later = sorted(r for r in redefinitions if r > definition)
    for index, line in places:
        if index <= definition or (later and later[0] <= index):
            continue
        if type(body[index]) in _AST_LOOPS and any(u == index for u, _ in uses):
            return True
        end = next((r for r in later if r > index), len(body))
        before = any(definition < u < index or (u == index and (line is None or at < line)) for u, at in uses)
        after = any(index < u < end or (u == index and (line is None or at > line)) for u, at in uses)
        if before and after:
            return True
    return False


def _match_names(node: ast.AST) -> list[str]:
    """The names of a `match` pattern node, which LibCST takes for reads (it gives them no store context)."""
    kind = type(node)
    if kind is ast.MatchClass:
        return node.kwd_attrs
    name = node.rest if kind is ast.MatchMapping else node.name
    return [name] if name else []
