"""A call's arguments bound to parameter names as Python would bind them, on `ast`, and mapped onto another API's
keywords: what a fix that rewrites a call decides before it edits anything (JF901's `index_update`, `tie_in`,
`pjit`, `shard_map` rewrites). Arguments are given as written (`module.in_order`: positional ones, `*a`,
keywords and `**k` in source order); answers name them by their place in that list."""

from __future__ import annotations

import ast
from typing import Mapping, Sequence

from jaxfix.facts.module import value_of


def bind(arguments: Sequence[ast.AST], params: Sequence[str], *, required: int) -> dict[str, int] | None:
    """Each parameter name → the place of the argument bound to it; None for `*`/`**`, unknown, repeated or missing
    ones, or keywords given out of order where moving them would reorder a call's side effects."""
    bound: dict[str, int] = {}
    positional = 0
    for place, argument in enumerate(arguments):
        if type(argument) is ast.Starred or (type(argument) is ast.keyword and argument.arg is None):
            return None
        if type(argument) is not ast.keyword:
            if positional >= len(params):
                return None
            name = params[positional]
            positional += 1
        else:
            name = argument.arg
            if name not in params:
                return None
        if name in bound:
            return None
        bound[name] = place
    if any(p not in bound for p in params[:required]):
        return None
    canonical = [p for p in params if p in bound]
    if list(bound) != canonical and any(has_effects(value_of(arguments[bound[n]])) for n in bound):
        return None
    return bound


def mapped_keywords(
    arguments: Sequence[ast.AST], positional: Sequence[str], renames: Mapping[str, str], allowed: frozenset[str], *,
    unpacked: bool,
) -> list[tuple[str | None, bool]] | None:
    """How each argument is passed to a new API whose parameters are `positional` (the first, the function, stays
    positional; the others by keyword) and `allowed` keywords, old keywords renamed by `renames`: per argument, the
    keyword it is then given (None: as it is, the function or `**k`) and whether it was positional. None where
    that cannot be done exactly: `*a`, `**k` (unless `unpacked`), an extra positional argument, an unknown or
    repeated keyword."""
    out: list[tuple[str | None, bool]] = []
    seen: set[str] = set()
    for place, argument in enumerate(arguments):
        if type(argument) is ast.Starred:
            return None
        if type(argument) is ast.keyword and argument.arg is None:
            if not unpacked:
                return None
            out.append((None, False))
            continue
        if type(argument) is not ast.keyword:
            if place >= len(positional):
                return None
            if place == 0:
                out.append((None, False))  # the function
                continue
            name = positional[place]
            out.append((name, True))
        else:
            name = renames.get(argument.arg, argument.arg)
            if name not in allowed:
                return None
            out.append((name if name != argument.arg else None, False))
        if name in seen:
            return None
        seen.add(name)
    return out


def keyword(argument: ast.AST, change: tuple[str | None, bool]) -> str | None:
    """The keyword an argument is passed by once `mapped_keywords`'s `change` is made (None: positional or `**k`)."""
    new, _ = change
    if new is not None:
        return new
    return argument.arg if type(argument) is ast.keyword else None


def has_effects(expr: ast.AST) -> bool:
    """Whether evaluating `expr` may do more than read names (a call, await, yield or walrus inside it; a lambda's
    body does not run there)."""
    pending = [expr]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in _EFFECTS:
            return True
        if kind is ast.Lambda:
            continue
        pending.extend(ast.iter_child_nodes(node))
    return False


_EFFECTS = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)
