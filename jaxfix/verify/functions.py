"""Which functions a module defines, where they lie, and which of them a rewrite changed. Read from the source
with `ast`, never by importing it.

A function is named by its qualified name in the module: `f` for a top-level `def f` (or `f = jax.jit(g)`,
`f = lambda ...`), `C.m` for a method defined directly in class `C`. That is also how verification looks it up
in the loaded module (`getattr` along the dots) and how `apply --verify` decides which fixes to keep.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Definition:
    name: str  # qualified: "f" or "C.m"
    node: ast.AST  # the FunctionDef, or the Assign that binds a top-level callable
    start: int  # first line, decorators included
    end: int  # last line
    is_method: bool = False


def definitions(tree: ast.Module) -> dict[str, Definition]:
    """Top-level functions, top-level names bound to a call or lambda (`f = jax.jit(g)`), and methods."""
    found: dict[str, Definition] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[node.name] = _definition(node.name, node)
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Call, ast.Lambda)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = _definition(target.id, node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    name = f"{node.name}.{item.name}"
                    found[name] = _definition(name, item, is_method=True)
    return found


TEST_MODULE_NAMES = ("test_*.py", "*_test.py", "*_tests.py", "tests.py", "test.py")  # pytest's and absltest's habits


def is_test_module(path: str) -> bool:
    from fnmatch import fnmatch

    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return any(fnmatch(name, pattern) for pattern in TEST_MODULE_NAMES)


def test_class(tree: ast.Module, name: str, path: str) -> bool:
    """Whether class `name` of the module at `path` is a test class: in a test module, a class named as pytest
    collects them (`Test*`) or one whose bases, followed through the module's own classes, include a
    `...TestCase` (unittest, absltest, parameterized, chex and projects' own bases). How the framework runs it
    is decided when it is loaded (a unittest.TestCase subclass or not)."""
    if not is_test_module(path):
        return False
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    seen: set[str] = set()

    def based_on_a_test_case(class_name: str) -> bool:
        if class_name in seen or class_name not in classes:
            return False
        seen.add(class_name)
        for base in classes[class_name].bases:
            last = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
            if last.endswith("TestCase") or based_on_a_test_case(last):
                return True
        return False

    return name in classes and (name.startswith("Test") or based_on_a_test_case(name))


def kind(tree: ast.Module, name: str, path: str, module_text: str = "") -> str:
    """What `name` is, for messages: "function", "method", "test method", "module variable" (`f = jax.jit(g)`),
    and in a notebook "notebook variable (cell 4)" or "function (cell 4)"."""
    from jaxfix import notebook

    definition = definitions(tree).get(name)
    if definition is not None and definition.is_method:
        return "test method" if test_class(tree, name.split(".")[0], path) else "method"
    what = "function" if definition is None or not isinstance(definition.node, ast.Assign) else "variable"
    if not notebook.is_notebook(path):
        return "module variable" if what == "variable" else what
    place = notebook.place(module_text, definition.start) if definition is not None and module_text else None
    where = f" (cell {place[0]})" if place else ""
    return f"notebook variable{where}" if what == "variable" else f"function{where}"


def _definition(name: str, node: ast.AST, *, is_method: bool = False) -> Definition:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno] + [d.lineno for d in decorators])
    return Definition(name, node, start, node.end_lineno or node.lineno, is_method)


def owner_at(tree: ast.Module, line: int) -> str | None:
    """The qualified name of the definition that holds `line`, or None for module-level code."""
    best: Definition | None = None
    for definition in definitions(tree).values():
        if definition.start <= line <= definition.end and (best is None or definition.start >= best.start):
            best = definition
    return best.name if best else None


def parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def changed(before: str, after: str) -> list[str]:
    """The functions of `after` that a rewrite of `before` changed: those whose own code differs, and those that
    read a module-level name whose binding changed (an import rewritten, say). In `after`'s order. A function the
    rewrite added is left out: it has no original, and the functions that call it changed too."""
    old_tree, new_tree = parse(before), parse(after)
    if old_tree is None or new_tree is None:
        return []
    old, new = definitions(old_tree), definitions(new_tree)
    rebound = {name for name, _ in _module_level_bindings(old_tree) ^ _module_level_bindings(new_tree)}
    return [
        name
        for name, definition in new.items()
        if name in old and (_dump(definition.node) != _dump(old[name].node) or rebound & _names_read(definition.node))
    ]


def _dump(node: ast.AST) -> str:
    return ast.dump(node, include_attributes=False)


def _module_level_bindings(tree: ast.Module) -> set[tuple[str, str]]:
    """(name, the statement that binds it) for imports and assignments outside definitions."""
    bound: set[tuple[str, str]] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                bound.add((name, _dump(node)))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name):
                        bound.add((sub.id, _dump(node)))
    return bound


def _names_read(node: ast.AST) -> set[str]:
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}


def parameters(tree: ast.Module, name: str) -> ast.arguments | None:
    """The parameters of the definition `name` (a `def`; a bound lambda's too), or None when they cannot be read
    from the source (`f = jax.jit(g)`: then g's, if g is a top-level def)."""
    definition = definitions(tree).get(name)
    if definition is None:
        return None
    node = definition.node
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.args
    if isinstance(node, ast.Assign):
        if isinstance(node.value, ast.Lambda):
            return node.value.args
        wrapped = _wrapped_function(node.value)
        if wrapped and wrapped != name:
            return parameters(tree, wrapped)
    return None


def _wrapped_function(call: ast.AST) -> str | None:
    """`g` in `jax.jit(g)`, `jax.jit(g, static_argnums=1)`, `partial(jax.jit, ...)(g)` (not `jax.vmap(g)`, which
    changes what the arguments mean)."""
    if not isinstance(call, ast.Call) or not call.args or not isinstance(call.args[0], ast.Name):
        return None
    func = call.func
    if isinstance(func, ast.Call):  # partial(jax.jit, ...)(g)
        func = func.args[0] if func.args else func.func
    last = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return call.args[0].id if last in {"jit", "pjit", "checkpoint", "remat", "named_call"} else None


def function_node(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The `def` behind `name`, following `f = jax.jit(g)` to `g`."""
    definition = definitions(tree).get(name)
    if definition is None:
        return None
    if isinstance(definition.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return definition.node
    wrapped = _wrapped_function(getattr(definition.node, "value", None))
    return function_node(tree, wrapped) if wrapped and wrapped != name else None


def calls(tree: ast.Module) -> dict[str, set[str]]:
    """For each definition, the other definitions whose names it reads (calls, mostly): `population =
    jax.vmap(logistic_map)` reads `logistic_map`; reading a class `C` counts as reading each of its methods."""
    defined = definitions(tree)
    graph: dict[str, set[str]] = {}
    for name, definition in defined.items():
        read = _names_read(definition.node)
        graph[name] = {other for other in defined if other != name and other.split(".")[0] in read}
    return graph


def callers(tree: ast.Module, names: set[str]) -> list[str]:
    """The definitions that reach one of `names` through reads, transitively (not `names` themselves)."""
    graph = calls(tree)
    found: set[str] = set()
    frontier = set(names)
    while frontier:
        new = {caller for caller, callees in graph.items() if callees & frontier and caller not in found and caller not in names}
        found |= new
        frontier = new
    return [name for name in graph if name in found]


def reached(tree: ast.Module, name: str) -> set[str]:
    """The definitions `name` reaches through reads, transitively."""
    graph = calls(tree)
    found: set[str] = set()
    frontier = {name}
    while frontier:
        new = {callee for caller in frontier for callee in graph.get(caller, ()) if callee not in found and callee != name}
        found |= new
        frontier = new
    return found
