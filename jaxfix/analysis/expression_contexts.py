"""ExpressionContextProvider's map (node → LOAD/STORE/DEL), built in one direct pass: the same entries, with the
same values, in the same order.

ScopeProvider depends on ExpressionContextProvider, so every module sent to LibCST pays for it. LibCST's
ExpressionContextVisitor starts a fresh visitor (and a fresh traversal) for every assignment target, attribute
value, subscript slice, parameter name and definition name, and walks every whitespace and punctuation node.
`contexts` calls one function per node instead, with the context as an argument, and skips metadata.TRIVIA,
under which no node gets a context (resolving the provider on 21 real files, 336k nodes, under fast_visits:
0.161 -> 0.080 s of CPU). Each `_visit_<Node>` below follows the ExpressionContextVisitor method of that name,
quirks included (an Attribute's `attr` gets no context, a class's body comes before its bases, a def's type
parameters are not visited). tests/test_expression_contexts.py compares the maps with LibCST's.
"""

from __future__ import annotations

from typing import Callable, Sequence

import libcst as cst
from libcst.metadata.expression_context_provider import ExpressionContext, ExpressionContextProvider

from jaxfix.analysis.metadata import CHILD_GETTERS, IS_NODE_TYPE, TRIVIA, visited_fields

LOAD, STORE, DEL = ExpressionContext.LOAD, ExpressionContext.STORE, ExpressionContext.DEL
_Found = dict  # node → ExpressionContext, in the order LibCST's visitor sets them


def contexts(module: cst.Module) -> dict[cst.CSTNode, ExpressionContext]:
    """The map ExpressionContextProvider computes for `module`."""
    found: _Found = {}
    _visit(module, LOAD, found)
    return found


def _visit(node: cst.CSTNode, context: ExpressionContext, found: _Found) -> None:
    """What `node.visit(ExpressionContextVisitor(provider, context))` records."""
    special = _SPECIAL.get(type(node))
    if special is not None:
        special(node, context, found)
    elif type(node) not in TRIVIA:
        _visit_children(node, context, found)


def _visit_children(node: cst.CSTNode, context: ExpressionContext, found: _Found) -> None:
    """The visit of each child, in LibCST's order: what a node without a method of the visitor gets (or one whose
    method does not return False)."""
    for value in CHILD_GETTERS[type(node)](node):
        if IS_NODE_TYPE[type(value)]:
            _visit(value, context, found)
        elif type(value) in (list, tuple):
            for item in value:
                if IS_NODE_TYPE[type(item)]:
                    _visit(item, context, found)


def _visit_Assign(node: cst.Assign, context: ExpressionContext, found: _Found) -> None:
    for target in node.targets:
        _visit(target, STORE, found)
    _visit(node.value, context, found)


def _visit_AnnAssign(node: cst.AnnAssign, context: ExpressionContext, found: _Found) -> None:
    _visit(node.target, STORE, found)
    _visit(node.annotation, context, found)
    value = node.value
    if value:
        _visit(value, context, found)


def _visit_target_then_value(node: cst.AugAssign | cst.NamedExpr, context: ExpressionContext, found: _Found) -> None:
    """`visit_AugAssign` and `visit_NamedExpr`."""
    _visit(node.target, STORE, found)
    _visit(node.value, context, found)


def _visit_Name(node: cst.Name, context: ExpressionContext, found: _Found) -> None:
    found[node] = context


def _visit_AsName(node: cst.AsName, context: ExpressionContext, found: _Found) -> None:
    _visit(node.name, STORE, found)


def _visit_CompFor(node: cst.CompFor, context: ExpressionContext, found: _Found) -> None:
    _visit(node.target, STORE, found)
    _visit(node.iter, context, found)
    for condition in node.ifs:
        _visit(condition, context, found)
    inner_for_in = node.inner_for_in
    if inner_for_in:
        _visit(inner_for_in, context, found)


def _visit_For(node: cst.For, context: ExpressionContext, found: _Found) -> None:
    _visit(node.target, STORE, found)
    _visit(node.iter, context, found)
    _visit(node.body, context, found)
    orelse = node.orelse
    if orelse:
        _visit(orelse, context, found)


def _visit_Del(node: cst.Del, context: ExpressionContext, found: _Found) -> None:
    _visit(node.target, DEL, found)


def _visit_Attribute(node: cst.Attribute, context: ExpressionContext, found: _Found) -> None:
    found[node] = context
    _visit(node.value, LOAD, found)  # not `attr`: it gets no context


def _visit_Subscript(node: cst.Subscript, context: ExpressionContext, found: _Found) -> None:
    found[node] = context
    _visit(node.value, LOAD, found)
    slice_ = node.slice
    if isinstance(slice_, Sequence):
        for element in slice_:
            _visit(element, LOAD, found)
    else:
        _visit(slice_, LOAD, found)


def _visit_container(
    node: cst.Tuple | cst.List | cst.StarredElement, context: ExpressionContext, found: _Found
) -> None:
    """`visit_Tuple`, `visit_List` and `visit_StarredElement`: the node gets the context, and so do its children."""
    found[node] = context
    _visit_children(node, context, found)


def _visit_ClassDef(node: cst.ClassDef, context: ExpressionContext, found: _Found) -> None:
    _visit(node.name, STORE, found)
    _visit(node.body, context, found)
    for base in node.bases:
        _visit(base, context, found)
    for keyword in node.keywords:
        _visit(keyword, context, found)
    for decorator in node.decorators:
        _visit(decorator, context, found)


def _visit_FunctionDef(node: cst.FunctionDef, context: ExpressionContext, found: _Found) -> None:
    _visit(node.name, STORE, found)
    _visit(node.params, context, found)
    _visit(node.body, context, found)
    for decorator in node.decorators:
        _visit(decorator, context, found)
    returns = node.returns
    if returns:
        _visit(returns, context, found)


def _visit_Param(node: cst.Param, context: ExpressionContext, found: _Found) -> None:
    _visit(node.name, STORE, found)
    annotation = node.annotation
    if annotation:
        _visit(annotation, context, found)
    default = node.default
    if default:
        _visit(default, context, found)


# The node types ExpressionContextVisitor has a method for (LibCST's `on_visit` looks it up by the type's name).
_SPECIAL: dict[type, Callable[[cst.CSTNode, ExpressionContext, _Found], None]] = {
    cst.Assign: _visit_Assign,
    cst.AnnAssign: _visit_AnnAssign,
    cst.AugAssign: _visit_target_then_value,
    cst.NamedExpr: _visit_target_then_value,
    cst.Name: _visit_Name,
    cst.AsName: _visit_AsName,
    cst.CompFor: _visit_CompFor,
    cst.For: _visit_For,
    cst.Del: _visit_Del,
    cst.Attribute: _visit_Attribute,
    cst.Subscript: _visit_Subscript,
    cst.Tuple: _visit_container,
    cst.List: _visit_container,
    cst.StarredElement: _visit_container,
    cst.ClassDef: _visit_ClassDef,
    cst.FunctionDef: _visit_FunctionDef,
    cst.Param: _visit_Param,
}


def visit_Module(self: ExpressionContextProvider, node: cst.Module) -> None:
    """ExpressionContextProvider.visit_Module, in one pass (named as the method it replaces: a batched traversal
    calls the methods whose `__name__` starts with `visit_`)."""
    _visit(node, LOAD, self._computed)


_installed = False


def install() -> None:
    """Make ExpressionContextProvider use `contexts`, once per process. Where LibCST's source cannot be read (a
    compiled LibCST, whose visited fields metadata cannot tell), it keeps its own."""
    global _installed
    if not _installed:
        _installed = True
        if visited_fields(cst.Module) is not None:
            ExpressionContextProvider.visit_Module = visit_Module
