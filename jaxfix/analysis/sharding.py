"""What a sharding argument holds, and where a module enters a legacy mesh context.

`jax.experimental.pjit.pjit` and `jax.jit` read different context meshes: pjit the one a legacy `with mesh:` block
sets, jax.jit the one `jax.set_mesh` sets (JAX's own `use_resource_env` flag, True for pjit only, in its sources
from 0.4.30 to 0.10.2). A `Sharding` object names its devices and
means the same under both; a `PartitionSpec` names only mesh axes, and `None` (or no sharding at all) lets the
context mesh decide: under `with mesh:` pjit resolves a spec against that mesh and replicates what `None`
leaves open over it, where jax.jit raises RuntimeError for the spec and places the rest on one device.
tests/test_deprecated_api_table.py keeps these premises true on the installed JAX.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.libraries import CONTEXT_MESH_SETTERS, MESH_CLASSES, PARTITION_SPECS, SHARDING_CLASSES

# What a sharding argument holds, from the most telling: a spec (or something that may be one) decides.
UNKNOWN, SPEC, NONE, SHARDING = "unknown", "spec", "none", "sharding"
_ORDER = (UNKNOWN, SPEC, NONE, SHARDING)


class ShardingAnalysis:
    def __init__(self, context) -> None:
        self.context = context

    def kind(self, expr: cst.BaseExpression, depth: int = 0) -> str:
        """SHARDING where `expr` is surely a `Sharding` object or a tuple, list or dict of them; SPEC where it is
        a `PartitionSpec` (or holds one); NONE for `None` (or a container of `None`s and shardings); UNKNOWN
        otherwise (a parameter, a call of anything else). A name counts as its one assignment in its scope."""
        if isinstance(expr, cst.Name) and expr.value == "None":
            return NONE
        if isinstance(expr, (cst.Tuple, cst.List)):
            if not expr.elements or any(isinstance(e, cst.StarredElement) for e in expr.elements):
                return UNKNOWN
            return _weakest(self.kind(e.value, depth) for e in expr.elements)
        if isinstance(expr, cst.Dict):
            if not expr.elements or any(not isinstance(e, cst.DictElement) for e in expr.elements):
                return UNKNOWN
            return _weakest(self.kind(e.value, depth) for e in expr.elements)
        if isinstance(expr, cst.Call):
            callee = self.context.names.qualified(expr.func)
            if callee in SHARDING_CLASSES:
                return SHARDING
            return SPEC if callee in PARTITION_SPECS else UNKNOWN
        if isinstance(expr, cst.Name) and depth < 3:
            value = self._only_value(expr)
            return self.kind(value, depth + 1) if value is not None else UNKNOWN
        return UNKNOWN

    def _only_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of the one plain assignment (`name = value`) that binds `name` in its scope, or None."""
        scope = self.context.wrapper.resolve(ScopeProvider).get(name)
        if scope is None:
            return None
        assignments = list(scope[name.value])
        if len(assignments) != 1:
            return None
        target = self.context.parents.get(getattr(assignments[0], "node", None))
        statement = self.context.parents.get(target) if isinstance(target, cst.AssignTarget) else None
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1 or target.target is not assignments[0].node:
            return None
        return statement.value

    @cached_property
    def legacy_mesh_contexts(self) -> tuple[cst.WithItem, ...]:
        """The items of the module's `with` statements that may enter a legacy mesh context: a mesh built there
        (`with Mesh(devices, ("x",)):`, a call whose name says mesh, such as `with make_mesh():`), or an object
        used as its own context manager (`with self._mesh:`, `with mesh:`), which may be a mesh. `jax.set_mesh`
        and `use_mesh` set the new context, not the legacy one. A function that returns a mesh under another name
        (`with devices():`) is not seen."""
        finder = _WithItems()
        self.context.module.visit(finder)
        return tuple(item for item in finder.items if self._may_be_mesh(item.item))

    def _may_be_mesh(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
            return True
        if not isinstance(expr, cst.Call):
            return False
        callee = self.context.names.qualified(expr.func)
        if callee in MESH_CLASSES:
            return True
        if callee in CONTEXT_MESH_SETTERS:
            return False
        func = expr.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        return "mesh" in last.lower() and last not in ("set_mesh", "use_mesh")


def _weakest(kinds) -> str:
    found = set(kinds)
    return next(kind for kind in _ORDER if kind in found)


class _WithItems(cst.CSTVisitor):
    def __init__(self) -> None:
        self.items: list[cst.WithItem] = []

    def visit_WithItem(self, node: cst.WithItem) -> None:
        self.items.append(node)
