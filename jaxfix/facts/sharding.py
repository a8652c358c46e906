"""What a sharding argument holds, and where a module enters a legacy mesh context, on `ast`.

`jax.experimental.pjit.pjit` and `jax.jit` read different context meshes: pjit the one a legacy `with mesh:` block
sets, jax.jit the one `jax.set_mesh` sets (JAX's own `use_resource_env` flag, True for pjit only, in its sources
from 0.4.30 to 0.10.2). A `Sharding` object names its devices and
means the same under both; a `PartitionSpec` names only mesh axes, and `None` (or no sharding at all) lets the
context mesh decide: under `with mesh:` pjit resolves a spec against that mesh and replicates what `None`
leaves open over it, where jax.jit raises RuntimeError for the spec and places the rest on one device.
tests/test_deprecated_api_table.py keeps these premises true on the installed JAX. JF901's pjit fix reads these
facts; the project index reads `legacy_mesh_contexts` of every module.
"""

from __future__ import annotations

import ast
from typing import Iterable, Mapping

from jaxfix.facts.binder import Binder
from jaxfix.facts.imports import module_imports
from jaxfix.facts.module import dotted
from jaxfix.facts.knowledge.jax import CONTEXT_MESH_SETTERS, MESH_CLASSES, PARTITION_SPECS, SHARDING_CLASSES

# What a sharding argument holds, from the most telling: a spec (or something that may be one) decides.
UNKNOWN, SPEC, NONE, SHARDING = "unknown", "spec", "none", "sharding"
_ORDER = (UNKNOWN, SPEC, NONE, SHARDING)


def sharding_kind(binder: Binder, expr: ast.expr, depth: int = 0) -> str:
    """SHARDING where `expr` is surely a `Sharding` object or a tuple, list or dict of them; SPEC where it is a
    `PartitionSpec` (or holds one); NONE for `None` (or a container of `None`s and shardings); UNKNOWN otherwise (a
    parameter, a call of anything else). A name counts as its one assignment in its scope."""
    kind = type(expr)
    if kind is ast.Constant and expr.value is None:
        return NONE
    if kind in (ast.Tuple, ast.List):
        if not expr.elts or any(type(e) is ast.Starred for e in expr.elts):
            return UNKNOWN
        return _weakest(sharding_kind(binder, e, depth) for e in expr.elts)
    if kind is ast.Dict:
        if not expr.keys or any(k is None for k in expr.keys):
            return UNKNOWN
        return _weakest(sharding_kind(binder, v, depth) for v in expr.values)
    if kind is ast.Call:
        callee = binder.qualified(expr.func)
        if callee in SHARDING_CLASSES:
            return SHARDING
        return SPEC if callee in PARTITION_SPECS else UNKNOWN
    if kind is ast.Name and depth < 3:
        value = _only_value(binder, expr)
        return sharding_kind(binder, value, depth + 1) if value is not None else UNKNOWN
    return UNKNOWN


def _only_value(binder: Binder, name: ast.Name) -> ast.expr | None:
    """The value of the one plain assignment (`name = value`) that binds `name` in the scope that answers it, or
    None (LibCST's scope of the name: all its bindings there)."""
    scope = binder.scope_of.get(name)
    bindings = scope.resolve(name.id) if scope is not None else []
    if len(bindings) != 1:
        return None
    target = bindings[0].node
    statement = binder.parent(target) if type(target) is ast.Name else None
    if type(statement) is not ast.Assign or len(statement.targets) != 1 or statement.targets[0] is not target:
        return None
    return statement.value


def legacy_mesh_sites(tree: ast.Module, binder: Binder, project) -> tuple[str, ...]:
    """Where a legacy mesh context may be entered, worded for a message: in this module (`with self._mesh:`
    (line 426)), else elsewhere in the project (the project index's facts: `with mesh:` (in train))."""
    here = [f"`with {code}:` (line {line})" for line, code in legacy_mesh_contexts(tree, module_imports(binder))]
    return (*here, *(site for site in getattr(project, "legacy_meshes", ()) if not here))


def legacy_mesh_contexts(tree: ast.AST, imports: Mapping[str, Iterable[str]]) -> list[tuple[int, str]]:
    """(line, code) of each item of a `with` in `tree` that may enter a legacy mesh context: a mesh built there
    (`with Mesh(devices, ("x",)):`, `with jax.make_mesh(...)`, a call whose name says mesh, such as
    `with make_mesh():`), or an object used as its own context manager (`with self._mesh:`, `with mesh:`),
    which may be a mesh. `imports` maps a local name to the full names it may stand for. `jax.set_mesh` and
    `use_mesh` set the new context, not the legacy one. A function that returns a mesh under a name that does
    not say so (`with devices():`) is not seen."""
    found = []
    pending = list(getattr(tree, "body", ()))
    while pending:  # statements only (a `with` is one): a walk of every expression cost 5% of a parse
        node = pending.pop()
        if isinstance(node, (ast.With, ast.AsyncWith)):
            found.extend(
                (item.context_expr.lineno, ast.unparse(item.context_expr))
                for item in node.items
                if _may_be_mesh(item.context_expr, imports)
            )
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, block, None)
            if isinstance(inner, list):
                pending.extend(inner)
    return sorted(set(found))


def _may_be_mesh(expr: ast.expr, imports: Mapping[str, Iterable[str]]) -> bool:
    if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
        return True
    if not isinstance(expr, ast.Call):
        return False
    parts = dotted(expr.func)
    if parts is None:  # a method of a value (`scope(...).temporary()`) says what it is; `contexts[0]()` does not
        return not isinstance(expr.func, ast.Attribute) or _says_mesh(expr.func.attr)
    fulls = {".".join((full, *parts[1:])) for full in imports.get(parts[0], ())}
    if fulls & MESH_CLASSES:
        return True
    return not fulls & CONTEXT_MESH_SETTERS and _says_mesh(parts[-1])


def _says_mesh(name: str) -> bool:
    return "mesh" in name.lower() and name not in ("set_mesh", "use_mesh")


def _weakest(kinds) -> str:
    found = set(kinds)
    return next(kind for kind in _ORDER if kind in found)
