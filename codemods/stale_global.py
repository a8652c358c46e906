"""JF804 stale-global-in-jit: a jitted function reads a module global that the module rebinds after the function
may have run; the compiled program keeps the value it was traced with."""

from __future__ import annotations

import ast

from typing import Iterator

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic
from jaxfix.facts.binder import Binder, Binding
from jaxfix.facts.flow import Lines, walk
from jaxfix.facts.jitted import Jitted, assignments, jitted_functions
from jaxfix.facts.module import FileFacts

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# bindings that make no value the rule follows: imports, defs, classes, `except ... as name` (LibCST's `AsName`)
_NOT_VALUES = (ast.Import, ast.ImportFrom, *_DEFS, ast.ClassDef, ast.ExceptHandler)


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

    looks_at = ()  # it judges each jitted function against the whole module (its visitor looked at `Module`)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each module global that a module-level jitted function (or a module-level function it calls by name)
        reads and that the module rebinds where a call may have run already (`_Module.rebinding`), at its first
        read in LibCST's walk order."""
        binder = facts.binder
        jitted = jitted_functions(binder)
        if not jitted:
            return []
        module = _Module(facts)
        functions = {s.name: s for s in binder.tree.body if isinstance(s, _DEFS)}
        found = []
        for entry in jitted:
            reported = set()
            for name, read in module.global_reads(_reached(binder, entry.function, functions)):
                if name in reported:
                    continue
                why = module.rebinding(name, entry)
                if why is not None:
                    reported.add(name)
                    found.append(cls.finding(
                        facts, read,
                        f"`{entry.name}` is compiled with jax.jit and reads the global `{name}`, which {why}: jit "
                        f"keeps the value it read when it traced `{entry.name}`, and later calls with the same "
                        f"shapes still use it; pass `{name}` as an argument",
                    ))  # fmt: skip
        return found


def _statements_walked(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a def's body in LibCST's `walk` order over it (the last statement first)."""
    for statement in reversed(function.body):
        yield from walk(statement)


def _is_global(binder: Binder, name: ast.Name) -> bool:
    """Whether every binding the name may stand for where it is spelled is the module's (LibCST's `scope[name]`)."""
    scope = binder.scope_of.get(name)
    return scope is not None and all(b.scope is binder.module for b in scope.resolve(name.id))


def _reached(binder: Binder, function: ast.AST, functions: dict[str, ast.AST]) -> list[ast.AST]:
    """`function` and the module-level functions it calls by name, transitively."""
    found, todo = [function], [function]
    while todo:
        for n in _statements_walked(todo.pop()):
            if type(n) is ast.Call and type(n.func) is ast.Name:
                callee = functions.get(n.func.id)
                if callee is not None and all(callee is not f for f in found) and _is_global(binder, n.func):
                    found.append(callee)
                    todo.append(callee)
    return found


class _Module:
    """The module's global bindings and its top-level statements as LibCST holds them (one per line of simple
    statements joined by `;`), what `rebinding` compares."""

    def __init__(self, facts: FileFacts) -> None:
        self.facts = facts
        self.binder = binder = facts.binder
        self.top: dict[int, int] = {}  # id of a module-level statement -> its LibCST statement's index
        groups = Lines(facts.text).group(binder.tree.body)
        for index, (_, statements) in enumerate(groups):
            for statement in statements:
                self.top[id(statement)] = index
        self.count = len(groups)
        self._bindings: dict[str, list[Binding]] = {}
        self.loops = {index for index, (_, statements) in enumerate(groups) if isinstance(statements[0], _LOOPS)}

    def bindings(self, name: str) -> list[Binding]:
        found = self._bindings.get(name)
        if found is None:
            found = self._bindings[name] = assignments(self.binder, name)
        return found

    def global_reads(self, functions: list[ast.AST]) -> Iterator[tuple[str, ast.AST]]:
        """(name, read) for each module global read in the bodies of `functions`: a load, a `del`, an `op=` target."""
        binder = self.binder
        for function in functions:
            for n in _statements_walked(function):
                kind = type(n)
                if kind is ast.AugAssign and type(n.target) is ast.Name:
                    n = n.target
                elif kind is not ast.Name or type(n.ctx) is ast.Store:
                    continue
                if self.bindings(n.id) and _is_global(binder, n):
                    yield n.id, n

    def index(self, node: ast.AST) -> int | None:
        """The index of the module-level statement that holds `node`."""
        parents = self.binder.parents
        while node is not None and id(node) not in self.top:
            node = parents.get(node)
        return None if node is None else self.top[id(node)]

    def rebinding(self, name: str, entry: Jitted) -> str | None:
        """How the module rebinds `name` where `entry` may have run already, or None."""
        assignments = sorted(self.bindings(name), key=lambda b: (b.node.lineno, b.node.col_offset))
        if len(assignments) < 2:
            return None
        parents = self.binder.parents
        for binding in assignments:
            node = binding.node
            if isinstance(node, _NOT_VALUES) or type(parents.get(node)) is ast.withitem:
                return None
        for binding in assignments:
            function = self.facts.traced.enclosing_function(binding.node)
            if function is not None:
                return f"`global {name}` in `{getattr(function, 'name', 'lambda')}` rebinds (line {binding.node.lineno})"
        definition = self.top.get(id(entry.binding))
        uses = self._uses(entry)
        redefined = self._redefinitions(entry, definition)
        for binding in assignments:
            node = binding.node
            index = self.index(node)
            if definition is None or index is None or index <= definition:
                continue
            line = node.lineno
            if any(r <= index for r in redefined):
                continue  # the jitted name was bound to something else before this rebinding
            before = [u for u in uses if definition < u[0] < index or (u[0] == index and u[1] < line)]
            looped = index in self.loops and any(u[0] == index for u in uses)
            if looped:
                return f"the module rebinds at line {line}, in a loop that uses `{entry.name}`"
            # A stale value is read only by a call after the rebinding, before the name means another function
            # (a notebook's later cell that defines its own `train_step`).
            end = min((r for r in redefined if r > index), default=self.count)
            after = [u for u in uses if index < u[0] < end or (u[0] == index and u[1] > line)]
            if before and after:
                return (
                    f"the module rebinds at line {line}, after a use of `{entry.name}`, and uses `{entry.name}` "
                    f"again at line {after[0][1]}"
                )
        return None

    def _redefinitions(self, entry: Jitted, definition: int | None) -> list[int]:
        """Module statement indexes, after the jitted function's own, that bind its name again."""
        found = []
        for binding in self.bindings(entry.name):
            index = self.index(binding.node)
            if index is not None and definition is not None and index > definition:
                found.append(index)
        return sorted(found)

    def _uses(self, entry: Jitted) -> list[tuple[int, int]]:
        """(module statement index, line) of every read of the jitted name that refers to a module binding of it."""
        binder = self.binder
        bindings = self.bindings(entry.name)
        found = []
        for n in binder.nodes_of(ast.Name):
            if n.id == entry.name and any(b in bindings for b in binder.referents(n)):
                index = self.index(n)
                if index is not None:
                    found.append((index, n.lineno))
        return sorted(found)
