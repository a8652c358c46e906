"""Inputs from call sites: calls of the function, in its own module and in the project's other modules (its tests
first), whose arguments are literals (numbers, tuples, `jnp.ones((3, 4))`, `jax.random.normal(jax.random.key(0), (8,))`, names
assigned such an expression once in the same scope). Found with `ast`; the worker evaluates the expressions
in a namespace made only of the file's JAX and NumPy imports, and then draws values shaped like them.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path

from jaxfix import project_io
from jaxfix.discovery import SKIPPED_FOLDERS

ARRAY_MODULES = ("jax", "numpy", "ml_dtypes")  # the imports whose names a literal argument may use
MAX_CALLER_FILES = 2000
MAX_CALLS = 8
SUBSTITUTION_DEPTH = 4


@dataclass
class CallSites:
    calls: list[dict] = field(default_factory=list)  # {"args": [...], "kwargs": {...}}
    imports: list[str] = field(default_factory=list)  # import statements the expressions need
    where: list[str] = field(default_factory=list)  # "path:line" of each call


def find(path: Path, text: str, name: str, module_name: str) -> CallSites:
    """Literal calls of `name` (qualified, "f" or "C.m") in `text` itself and in the other modules of the project
    that holds `path`, its tests first (the calls that make a project's call-site evidence are inputs too).
    `module_name`: the dotted name other modules import the module by."""
    found = CallSites()
    _collect(text, path, found, callee_names={name}, own=True)
    for test in caller_files(path):
        try:
            source = test.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if name.split(".")[-1] not in source:
            continue
        tree = _parse(source)
        if tree is None:
            continue
        callees = _imported_as(tree, name, module_name)
        if callees:
            _collect(source, test, found, callee_names=callees, own=False, tree=tree)
    return found


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None


def project_root(path: Path) -> Path:
    """The project around `path` as the index finds it (`project_io.project_root`), else the file's folder."""
    return project_io.project_root([path]) or path.resolve().parent


def caller_files(path: Path) -> list[Path]:
    """The project's Python files other than `path`: its tests (`test_*.py`, `*_test.py`) first, then the rest."""
    root = project_root(path)
    own = path.resolve()
    tests: list[Path] = []
    others: list[Path] = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(s for s in subfolders if s not in SKIPPED_FOLDERS and not s.startswith("."))
        for file in sorted(files):
            if not file.endswith(".py") or (Path(folder) / file).resolve() == own:
                continue
            (tests if file.startswith("test_") or file.endswith("_test.py") else others).append(Path(folder) / file)
            if len(tests) + len(others) >= MAX_CALLER_FILES:
                return tests + others
    return tests + others


def module_name(path: Path) -> str:
    """The dotted name a module is imported by: its packages (folders with __init__.py) and its stem."""
    path = path.resolve()
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def _imported_as(tree: ast.Module, name: str, module: str) -> set[str]:
    """How a test file spells the function: `f` (from m import f), `alias` (as alias), `m.f` (import m, or
    from pkg import m). A module matches by its full dotted name or a tail of it (tests often put the source
    folder on sys.path and import `m` rather than `pkg.m`)."""
    head, _, rest = name.partition(".")
    spellings: set[str] = set()

    def matches(imported: str) -> bool:
        return imported == module or module.endswith("." + imported)

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            for alias in node.names:
                if node.module and matches(node.module) and alias.name == head:
                    spellings.add((alias.asname or head) + ("." + rest if rest else ""))
                elif matches(f"{node.module}.{alias.name}" if node.module else alias.name):
                    spellings.add(f"{alias.asname or alias.name}.{name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if matches(alias.name):
                    spellings.add(f"{alias.asname or alias.name}.{name}")
    return spellings


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.insert(0, node.id)
        return ".".join(parts)
    return ""


def _array_imports(tree: ast.Module) -> tuple[list[str], set[str]]:
    """The file's module-level imports from JAX and NumPy (as source) and the names they bind."""
    statements, names = [], set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            kept = [a for a in node.names if a.name.split(".")[0] in ARRAY_MODULES]
            if kept:
                statements.append(ast.unparse(ast.Import(names=kept)))
                names.update(a.asname or a.name.split(".")[0] for a in kept)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.split(".")[0] in ARRAY_MODULES:
            kept = [a for a in node.names if a.name != "*"]
            if kept:
                statements.append(ast.unparse(ast.ImportFrom(module=node.module, names=kept, level=0)))
                names.update(a.asname or a.name for a in kept)
    return statements, names


class _Scope:
    """The single assignments `x = expr` of one scope (a module or function body, not nested ones)."""

    def __init__(self, body: list[ast.stmt]) -> None:
        counts: dict[str, int] = {}
        self.values: dict[str, ast.expr] = {}
        for node in _walk_scope(body):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With)):
                targets = [getattr(node, "target", None)] if not isinstance(node, ast.With) else [i.optional_vars for i in node.items]
            for target in targets:
                for sub in ast.walk(target) if target is not None else []:
                    if isinstance(sub, ast.Name):
                        counts[sub.id] = counts.get(sub.id, 0) + 1
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.values[node.targets[0].id] = node.value
        self.values = {k: v for k, v in self.values.items() if counts.get(k) == 1}


def _walk_scope(body: list[ast.stmt]):
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        yield node
        for child in reversed(list(ast.iter_child_nodes(node))):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)


def _literal(node: ast.expr, modules: set[str], scopes: list[_Scope], depth: int = 0) -> ast.expr | None:
    """`node` with single-assignment names replaced by their values, if the result uses nothing but literals and
    the array modules; else None."""
    if isinstance(node, ast.Constant):
        return node
    if isinstance(node, ast.Name):
        if node.id in modules:
            return node
        if depth < SUBSTITUTION_DEPTH:
            for scope in scopes:
                if node.id in scope.values:
                    return _literal(scope.values[node.id], modules, scopes, depth + 1)
        return None
    if isinstance(node, ast.Attribute):
        root = _dotted(node).split(".")[0]
        return node if root in modules else None
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_literal(e, modules, scopes, depth) for e in node.elts]
        if any(i is None or isinstance(i, ast.Starred) for i in items):
            return None
        return type(node)(elts=items, ctx=ast.Load())
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return None
        keys = [_literal(k, modules, scopes, depth) for k in node.keys]
        values = [_literal(v, modules, scopes, depth) for v in node.values]
        if any(x is None for x in keys + values):
            return None
        return ast.Dict(keys=keys, values=values)
    if isinstance(node, ast.UnaryOp):
        operand = _literal(node.operand, modules, scopes, depth)
        return ast.UnaryOp(op=node.op, operand=operand) if operand is not None else None
    if isinstance(node, ast.BinOp):
        left, right = _literal(node.left, modules, scopes, depth), _literal(node.right, modules, scopes, depth)
        return ast.BinOp(left=left, op=node.op, right=right) if left is not None and right is not None else None
    if isinstance(node, ast.Call):
        func = node.func
        if not (isinstance(func, ast.Attribute) and _dotted(func).split(".")[0] in modules) and not (
            isinstance(func, ast.Name) and func.id in modules
        ):
            return None
        args = [_literal(a, modules, scopes, depth) for a in node.args]
        keywords = [(k.arg, _literal(k.value, modules, scopes, depth)) for k in node.keywords]
        if any(a is None or isinstance(a, ast.Starred) for a in args) or any(k is None or v is None for k, v in keywords):
            return None
        return ast.Call(func=func, args=args, keywords=[ast.keyword(arg=k, value=v) for k, v in keywords])
    return None


def _collect(text: str, path: Path, found: CallSites, *, callee_names: set[str], own: bool, tree: ast.Module | None = None) -> None:
    tree = tree or _parse(text)
    if tree is None:
        return
    imports, modules = _array_imports(tree)
    module_scope = _Scope(tree.body)
    scopes: list[tuple[list[_Scope], list[ast.stmt]]] = [([module_scope], tree.body)]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scopes.append(([_Scope(node.body), module_scope], node.body))
    for chain, body in scopes:
        for node in _walk_scope(body):
            if len(found.calls) >= MAX_CALLS:
                return
            if not isinstance(node, ast.Call) or _dotted(node.func) not in callee_names:
                continue
            args = [_literal(a, modules, chain) for a in node.args]
            kwargs = {k.arg: _literal(k.value, modules, chain) for k in node.keywords}
            if any(a is None or isinstance(a, ast.Starred) for a in args) or None in kwargs or any(v is None for v in kwargs.values()):
                continue
            call = {"args": [ast.unparse(a) for a in args], "kwargs": {k: ast.unparse(v) for k, v in kwargs.items()}}
            if call in found.calls:
                continue
            found.calls.append(call)
            found.where.append(_where(path, text, node.lineno))
            found.imports.extend(i for i in imports if i not in found.imports)
    return


def _where(path: Path, text: str, line: int) -> str:
    """`path:line`, or in a notebook (whose module `text` is) `path:cell N:line`."""
    from jaxfix import notebook

    if notebook.is_notebook(str(path)):
        found = notebook.place(text, line)
        if found is not None:
            return f"{_shown(path)}:cell {found[0]}:{found[1]}"
    return f"{_shown(path)}:{line}"


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)
