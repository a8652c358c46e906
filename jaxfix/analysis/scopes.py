"""ScopeProvider's map (node → scope), built by LibCST's own ScopeVisitor with a cheaper traversal: the same
entries, with the same scopes, in the same order.

ScopeVisitor records a node's scope in `on_leave` (`set_metadata`, an `isinstance` against a tuple of eleven
types, then CSTVisitor's `on_leave`, which formats and looks up a `leave_<Node>` name) for every node it walks:
702 k nodes in the 143 modules that a cold check of 10 real trees analyses with LibCST, 342 k of them
whitespace and punctuation (metadata.TRIVIA), which no method of ScopeVisitor answers. `_QuickScopeVisitor`
walks below each node it is handed itself, calling the same `visit_`, `leave_` and attribute methods in the
same order, and gives each TRIVIA node the scope in force, as `on_leave` would, without any call (the phase
on those modules: 2.02 s -> 1.27 s of CPU). tests/test_scopes.py compares its maps with LibCST's.
"""

from __future__ import annotations

from typing import Callable, Iterator, NamedTuple

import libcst as cst
from libcst.metadata import ScopeProvider
from libcst.metadata.scope_provider import _ASSIGNMENT_LIKE_NODES, ScopeVisitor

from jaxfix.analysis.syntax import dotted_name
from jaxfix.analysis.metadata import CHILD_GETTERS, IS_NODE_TYPE, TRIVIA, sequences_only, visited_fields

_installed = False


class _QuickScopeVisitor(ScopeVisitor):
    """ScopeVisitor that walks the subtree of each node a traversal (LibCST's, or metadata.visit) hands it, then
    declines its children to that traversal, which only calls `on_leave` on it. ScopeVisitor's methods start
    traversals of parts of a node themselves (`node.params.visit(self)`): each comes back here."""

    def __init__(self, provider: ScopeProvider) -> None:
        super().__init__(provider)
        self._recorded = provider._computed  # where `set_metadata` writes
        self._typing_bound: set[str] = set()  # the names that imports of typing modules have bound so far

    # ScopeVisitor asks the qualified names of every call's callee and of every subscripted name, to find type
    # hints (`typing.cast("T", x)`, `typing.Literal["a"]`): 19.5k of LibCST's scope look-ups on the 10 real trees,
    # nearly all for names that cannot stand for anything of typing. A qualified name starts with `typing` only
    # through an import of a typing module that bound the name (ImportAssignment: the module's name first), or as
    # a local name in a scope whose name starts with it (a `def typing`) or spelled so (`typing = ...`,
    # `typing.cast`): where none of these can hold, the visit goes on as LibCST's does when no name matched.

    def visit_Import(self, node: cst.Import) -> bool | None:
        if any(dotted_name(alias.name).startswith("typing") for alias in node.names):
            self._typing_bound.update(_bound_names(node.names))
        return super().visit_Import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool | None:
        if (
            not node.relative
            and node.module is not None
            and not isinstance(node.names, cst.ImportStar)
            and dotted_name(node.module).startswith("typing")
        ):
            self._typing_bound.update(_bound_names(node.names))
        return super().visit_ImportFrom(node)

    def visit_Call(self, node: cst.Call) -> bool | None:
        if self._may_name_typing(node.func):
            return super().visit_Call(node)
        self._ScopeVisitor__top_level_attribute_stack.append(None)
        self._ScopeVisitor__in_type_hint_stack.append(False)
        return True

    def visit_Subscript(self, node: cst.Subscript) -> bool | None:
        if type(node.value) is not cst.Name or self._may_name_typing(node.value):
            return super().visit_Subscript(node)
        self._ScopeVisitor__in_type_hint_stack.append(False)
        return True

    def _may_name_typing(self, expression: cst.BaseExpression) -> bool:
        """Whether some qualified name of `expression` (LibCST's `get_full_name_for_node`: through attributes,
        calls and subscripts to a name) may start with `typing` in the current scope."""
        if self.scope._name_prefix.startswith("typing"):
            return True
        head = expression
        while True:
            kind = type(head)
            if kind is cst.Attribute or kind is cst.Subscript:
                head = head.value
            elif kind is cst.Call:
                head = head.func
            else:
                break
        return kind is cst.Name and (head.value in self._typing_bound or head.value.startswith("typing"))

    def on_visit(self, node: cst.CSTNode) -> bool:
        fields, visit, _, hooked, _ = _calls_for(type(node))
        if visit is None or visit(self, node) is not False:
            self._walk_children(node, fields, hooked)
        return False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._recorded[original_node] = self.scope
        _, _, leave, _, assignment_like = _calls_for(type(original_node))
        if assignment_like:
            self.scope._assignment_count += 1
        if leave is not None:
            leave(self, original_node)

    def _walk(self, node: cst.CSTNode) -> None:
        """What LibCST's visit of `node` calls: `on_visit` (the `visit_<Node>` method), the children, `on_leave`."""
        kind = type(node)
        if kind in TRIVIA:
            self._record_trivia(node)
            return
        fields, visit, leave, hooked, assignment_like = _calls_for(kind)
        if visit is None or visit(self, node) is not False:
            self._walk_children(node, fields, hooked)
        self._recorded[node] = self.scope
        if assignment_like:
            self.scope._assignment_count += 1
        if leave is not None:
            leave(self, node)

    def _walk_children(self, node: cst.CSTNode, fields: tuple[str, ...], hooked: frozenset[str]) -> None:
        if not hooked:  # no attribute call around any field (most types): the fields' values in one call
            for value in CHILD_GETTERS[type(node)](node):
                if IS_NODE_TYPE[type(value)]:
                    self._walk(value)
                elif type(value) in (list, tuple):
                    for item in value:
                        if IS_NODE_TYPE[type(item)]:
                            self._walk(item)
            return
        for name in fields:
            value = getattr(node, name)
            around = name in hooked and not (value is None and name in sequences_only(type(node)))
            if around:
                self.on_visit_attribute(node, name)
            if IS_NODE_TYPE[type(value)]:
                self._walk(value)
            elif type(value) in (list, tuple):
                for item in value:
                    if IS_NODE_TYPE[type(item)]:
                        self._walk(item)
            if around:
                self.on_leave_attribute(node, name)

    def _record_trivia(self, node: cst.CSTNode) -> None:
        """What visiting a TRIVIA node records: each node of it, children first, gets the scope in force (no
        method of ScopeVisitor answers a TRIVIA type, and none is assignment-like)."""
        for value in CHILD_GETTERS[type(node)](node):
            if IS_NODE_TYPE[type(value)]:
                self._record_trivia(value)
            elif type(value) in (list, tuple):
                for item in value:
                    self._record_trivia(item)
        self._recorded[node] = self.scope


def _bound_names(aliases) -> Iterator[str]:
    """The first names that import aliases bind (`t` of `typing as t`, `typing` of `typing.re`)."""
    for alias in aliases:
        bound = alias.asname.name if alias.asname is not None else alias.name
        yield dotted_name(bound).split(".")[0]


class _Calls(NamedTuple):
    """What visiting a node of one type calls on `_QuickScopeVisitor`."""

    fields: tuple[str, ...]  # its visited fields, in order
    visit: Callable | None  # ScopeVisitor's `visit_<Node>`, None where only LibCST's empty stub
    leave: Callable | None  # `leave_<Node>`, the same
    hooked: frozenset[str]  # the fields with a `visit_<Node>_<field>`/`leave_<Node>_<field>` method
    assignment_like: bool  # counted by `on_leave` (its `isinstance` test)


_CALLS: dict[type, _Calls] = {}


def _calls_for(kind: type) -> _Calls:
    found = _CALLS.get(kind)
    if found is None:
        name = kind.__name__
        fields = visited_fields(kind)
        hooked = frozenset(f for f in fields if _method(f"visit_{name}_{f}") or _method(f"leave_{name}_{f}"))
        found = _CALLS[kind] = _Calls(
            fields, _method(f"visit_{name}"), _method(f"leave_{name}"), hooked, issubclass(kind, _ASSIGNMENT_LIKE_NODES)
        )
    return found


def _method(name: str) -> Callable | None:
    method = getattr(_QuickScopeVisitor, name, None)
    return None if method is None or getattr(method, "_is_no_op", False) else method


def visit_Module(self: ScopeProvider, node: cst.Module) -> None:
    """ScopeProvider.visit_Module, with the quicker visitor (named as the method it replaces: a batched
    traversal calls the methods whose `__name__` starts with `visit_`)."""
    visitor = _QuickScopeVisitor(self)
    node.visit(visitor)
    visitor.infer_accesses()


def install() -> None:
    """Make ScopeProvider use `_QuickScopeVisitor`, once per process. Where LibCST's source cannot be read (a
    compiled LibCST, whose visited fields metadata cannot tell), it keeps its own."""
    global _installed
    if not _installed:
        _installed = True
        if visited_fields(cst.Module) is not None:
            ScopeProvider.visit_Module = visit_Module
