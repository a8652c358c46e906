"""Python values that are surely numbers, or lists of them, on `ast` over the binder: what jit would take as a
pytree of scalars (JF704)."""

from __future__ import annotations

import ast

from jaxfix.facts.binder import Binder

_NOT_ARITHMETIC = (ast.Call, ast.Attribute, ast.Subscript, ast.Lambda, ast.JoinedStr)


def is_number(expr: ast.AST) -> bool:
    """A Python number literal (`3`, `-0.5`, `True`); not a complex one, nor a sign on a bool."""
    if type(expr) is ast.UnaryOp and isinstance(expr.op, (ast.USub, ast.UAdd)):
        inner = expr.operand
        return type(inner) is ast.Constant and type(inner.value) in (int, float)
    return type(expr) is ast.Constant and type(expr.value) in (int, float, bool)


def number_list(binder: Binder, expr: ast.AST, *, follow: bool = True) -> int | bool | None:
    """When `expr` is surely a Python list of numbers: its length where it is written out, True otherwise; else
    None. A list literal of numbers, `list(range(...))`, a one-`for` comprehension of arithmetic on the items of
    a `range`, or (`follow`) a name every binding of which is a single-target `=` of one of those."""
    kind = type(expr)
    if kind is ast.List:
        elements = expr.elts
        if elements and all(type(e) is not ast.Starred and is_number(e) for e in elements):
            return len(elements)
        return None
    if kind is ast.Call and binder.is_builtin(expr.func, "list"):
        values = [a.value if type(a) is ast.Starred else a for a in expr.args] + [k.value for k in expr.keywords]
        return True if len(values) == 1 and _is_range(binder, values[0]) else None
    if kind is ast.ListComp:
        if len(expr.generators) == 1 and _is_range(binder, expr.generators[0].iter):
            bound = {n.id for n in ast.walk(expr.generators[0].target) if type(n) is ast.Name}
            return True if _arithmetic_of(expr.elt, bound) else None
        return None
    if follow and kind is ast.Name:
        scope = binder.scope_of.get(expr)
        if scope is None:
            return None
        sizes = []
        for binding in scope.resolve(expr.id):
            node = binding.node
            statement = binder.parent(node) if type(node) is ast.Name else None
            if not (type(statement) is ast.Assign and len(statement.targets) == 1 and statement.targets[0] is node):
                return None
            size = number_list(binder, statement.value, follow=False)
            if size is None:
                return None
            sizes.append(size)
        if not sizes:
            return None
        return sizes[0] if len(set(sizes)) == 1 else True
    return None


def _is_range(binder: Binder, expr: ast.AST) -> bool:
    return type(expr) is ast.Call and binder.is_builtin(expr.func, "range")


def _arithmetic_of(expr: ast.AST, names: set[str]) -> bool:
    """Arithmetic of number literals and `names` (the integers of a range) only: a Python number. Strings make
    `["a" * i for i in range(3)]` a list of strings (jit rejects them, it does not retrace); `True` and `None`
    count as names, as LibCST spells them."""
    for node in ast.walk(expr):
        kind = type(node)
        if kind is ast.Name and node.id not in names:
            return False
        if kind is ast.Constant and (node.value is None or type(node.value) in (bool, str, bytes)):
            return False
        if isinstance(node, _NOT_ARITHMETIC):
            return False
        if kind is ast.BinOp and type(node.op) is ast.MatMult:
            return False
    return True
