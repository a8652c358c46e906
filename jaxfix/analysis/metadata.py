"""Cheaper equivalents of LibCST's own tree facts, giving the same answers: a node's children, each node's
parent, and the qualified names of a node.

LibCST computes each through its visitor machinery. On real code (261 files of eight JAX libraries that the
screens pass) ParentNodeProvider took 25.3 s where walking the nodes' dataclass fields takes 2.1 s;
`CSTNode.children` runs a visitor over the node (7.1 s for the 1.3 M nodes of the corpus, flax and optax, 2.7 s
here); QualifiedNameProvider spends a traversal wrapping `scope.get_qualified_names_for(node)` for every node,
where the codemods ask it for a handful. tests/test_metadata.py compares all three with LibCST's.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Collection, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedName, ScopeProvider

_FIELDS: dict[type, tuple[str, ...]] = {}
# The fields a node type's `_visit_and_replace_children` visits, in the order it visits them (its source reads
# `visit_required(self, "func", ...)`, `visit_sequence(self, "args", ...)`): the order `CSTNode.children` has.
_VISITED = re.compile(r'visit_\w+\(\s*self,\s*"(\w+)"')
_CHILD_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _child_fields(kind: type) -> tuple[str, ...] | None:
    try:
        source = inspect.getsource(kind._visit_and_replace_children)
    except (OSError, TypeError):  # no source (a compiled LibCST): use LibCST's own `children`
        return None
    return tuple(dict.fromkeys(_VISITED.findall(source)))


def children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """`node.children`: the nodes in its visited fields, in lexical order."""
    kind = type(node)
    try:
        names = _CHILD_FIELDS[kind]
    except KeyError:
        names = _CHILD_FIELDS[kind] = _child_fields(kind)
    if names is None:
        return node.children
    found: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif type(value) in (list, tuple):
            found.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


def parent_map(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    """Each node's parent, as ParentNodeProvider gives it: every CSTNode held in a field (or in a list or tuple
    in a field) of a node is that node's child."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        kind = type(node)
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
        for name in names:
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                parents[value] = node
                stack.append(value)
            elif type(value) in (list, tuple):
                for item in value:
                    if isinstance(item, cst.CSTNode):
                        parents[item] = node
                        stack.append(item)
    return parents


class QualifiedNames:
    """QualifiedNameProvider's answer for one node, computed when asked: the qualified names its scope gives it,
    or none for a node outside every scope."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self._scopes = wrapper.resolve(ScopeProvider)

    def get(self, node: cst.CSTNode, default: Collection[QualifiedName] | None = None) -> Collection[QualifiedName] | None:
        scope = self._scopes.get(node)
        return default if scope is None else scope.get_qualified_names_for(node)
