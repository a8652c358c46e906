"""The names a piece of code spells, as LibCST holds names (`Name` nodes): what fresh names must avoid and what
a name search over LibCST would meet, and a call's arguments as LibCST holds them (`in_order`, `value_of`). No fact
here, only spelling (facts/module.py and facts/flow.py read it)."""

from __future__ import annotations

import ast
from typing import Iterator


def names_in(tree: ast.AST) -> set[str]:
    """Every name spelled in `tree` where LibCST holds a `Name` (what `codegen.FreshNames` avoids): read and stored
    names, attributes', defs', classes', parameters', keywords', the dotted parts of imports and their aliases,
    `global`/`nonlocal` names, `except ... as` names, `match` captures and keys, type parameters."""
    found: set[str] = set()
    add = found.add
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Name:
            add(node.id)
        elif kind is ast.Attribute:
            add(node.attr)
        elif kind is ast.arg:
            add(node.arg)
        elif kind is ast.keyword:
            if node.arg is not None:
                add(node.arg)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            add(node.name)
        elif kind is ast.alias:
            found.update(node.name.split("."))
            if node.asname:
                add(node.asname)
        elif kind is ast.ImportFrom:
            if node.module:
                found.update(node.module.split("."))
        elif kind in (ast.Global, ast.Nonlocal):
            found.update(node.names)
        elif kind is ast.ExceptHandler or kind in _CAPTURES:
            if getattr(node, "name", None):
                add(node.name)
        elif kind is _MATCH_MAPPING:
            if node.rest:
                add(node.rest)
        elif kind is _MATCH_CLASS:
            found.update(node.kwd_attrs)
        elif kind in _TYPE_PARAMETERS:
            add(node.name)
    found.discard("*")
    return found


_CAPTURES = tuple(getattr(ast, kind) for kind in ("MatchAs", "MatchStar") if hasattr(ast, kind))
_MATCH_MAPPING = getattr(ast, "MatchMapping", None)
_MATCH_CLASS = getattr(ast, "MatchClass", None)
_TYPE_PARAMETERS = tuple(getattr(ast, kind) for kind in ("TypeVar", "ParamSpec", "TypeVarTuple") if hasattr(ast, kind))


def spelled_names(node: ast.AST) -> Iterator[str]:
    """Every name spelled in `node` as LibCST holds names: read and stored names, attributes' names, keyword
    arguments' names and lambdas' parameters (`x.grads` spells `x` and `grads`)."""
    for found in ast.walk(node):
        kind = type(found)
        if kind is ast.Name:
            yield found.id
        elif kind is ast.Attribute:
            yield found.attr
        elif kind is ast.keyword:
            if found.arg is not None:
                yield found.arg
        elif kind is ast.arg:
            yield found.arg


def in_order(call: ast.Call) -> list[ast.AST]:
    """A call's arguments as written (LibCST's `args`): positional ones, `*a`, keywords and `**k` in source order."""
    if not call.keywords:
        return list(call.args)
    return sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))


def value_of(argument: ast.AST) -> ast.AST:
    """An argument's expression (LibCST's `Arg.value`): `a` of `*a`, of `**a` and of `k=a`; an element's of `*a`."""
    return argument.value if type(argument) in (ast.Starred, ast.keyword) else argument
