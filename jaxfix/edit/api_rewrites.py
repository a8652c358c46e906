"""Building the rewrites of removed or renamed JAX APIs (JF901) on LibCST, from what `check` decided on `ast`: a
removed constant's expression spelled as the module names it, keywords added or given to arguments (where
`jaxfix.facts.arguments` mapped them onto the new API), an expression parenthesized where it takes a call's
place."""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from jaxfix.analysis.syntax import dotted_name
from jaxfix.codegen import keep_parens


class Qualify(cst.CSTTransformer):
    """A `value` row's expression with each dotted name spelled as this module names it (`spellings`: the dotted
    names of the expression → their spelling here, decided on `ast`)."""

    def __init__(self, spellings: dict[str, str]) -> None:
        self.spellings = spellings

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False  # the outermost dotted name is one qualified name

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return cst.parse_expression(self.spellings[dotted_name(original_node)])


def with_keywords(args: Sequence[cst.Arg], added: dict[str, str]) -> list[cst.Arg]:
    """`args` and then `added` as keyword arguments, a trailing comma kept last."""
    out = list(args)
    new = [cst.Arg(cst.parse_expression(v), keyword=cst.Name(k), equal=TIGHT_EQUAL) for k, v in added.items()]
    if out and isinstance(out[-1].comma, cst.Comma):
        new[-1] = new[-1].with_changes(comma=out[-1].comma)
        out[-1] = out[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return out + new


TIGHT_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def rekeyed(args: Sequence[cst.Arg], changes: Sequence[tuple[str | None, bool]]) -> list[cst.Arg]:
    """`args` passed as `facts.arguments.mapped_keywords` decided: each given its new keyword (`k=v` for a
    positional one), the others as they are."""
    out = []
    for arg, (keyword, positional) in zip(args, changes):
        if keyword is not None:
            arg = arg.with_changes(keyword=cst.Name(keyword), **({"equal": TIGHT_EQUAL} if positional else {}))
        out.append(arg)
    return out


_ATOMS = (
    cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.List, cst.Dict, cst.Set, cst.SimpleString,
    cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis, cst.ListComp, cst.DictComp, cst.SetComp,
)  # fmt: skip


def receiver(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`expr` fit to stand before `.at`: parenthesized unless it is already a primary."""
    if expr.lpar or isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


_NO_PARENS_NEEDED = (cst.Arg, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr, cst.Element,
                     cst.DictElement, cst.Index, cst.Yield)  # fmt: skip


def parenthesized(expr: cst.BaseExpression, parent: cst.CSTNode | None) -> cst.BaseExpression:
    """`expr` put where a call stood: parenthesized unless it is atomic or its new place cannot bind tighter."""
    if expr.lpar or isinstance(expr, _ATOMS) or isinstance(parent, _NO_PARENS_NEEDED):
        return expr
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)) and not isinstance(parent, cst.Attribute):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


# ---- JF901's fixes, one builder per kind of plan (`DeprecatedApi.fix_finding`) -----------------------------------
# Each builder takes the CST node of the plan's `ast` node, the plan's data and the bridge, and gives the fix's
# changes (None: no fix after all). Arguments are found by their place in `call.args`, which is `in_order`'s on
# `ast`, where `check` bound them.


def _spelled_as(old: cst.BaseExpression, text: str) -> cst.BaseExpression:
    return keep_parens(old, cst.parse_expression(text))


def _build_name(node, data, bridge):
    return [(node, _spelled_as(node, data[0]))]


def _build_call(call, data, bridge):
    text, renames, added = data
    args = [
        a.with_changes(keyword=cst.Name(renames[a.keyword.value])) if a.keyword is not None and a.keyword.value in renames
        else a
        for a in call.args
    ]  # fmt: skip
    if added:
        args = with_keywords(args, added)
    return [(call, call.with_changes(func=_spelled_as(call.func, text), args=args))]


def _build_at(call, data, bridge):
    method, bound, asarray, unwrap = data
    value = {name: call.args[place].value for name, place in bound.items()}
    x, idx = value["x"], value["idx"]
    if asarray is not None:
        x = cst.Call(cst.parse_expression(asarray), [cst.Arg(x)])
    elements = list(idx.slice) if unwrap else [cst.SubscriptElement(cst.Index(idx))]
    keywords = [
        cst.Arg(value[k], keyword=cst.Name(k), equal=TIGHT_EQUAL) for k in ("indices_are_sorted", "unique_indices")
        if k in value
    ]  # fmt: skip
    at = cst.Subscript(cst.Attribute(receiver(x), cst.Name("at")), elements)
    new = cst.Call(cst.Attribute(at, cst.Name(method)), [cst.Arg(value["y"]), *keywords])
    return [(call, keep_parens(call, new))]


def _build_tie_in(call, data, bridge):
    (place,) = data
    return [(call, keep_parens(call, parenthesized(call.args[place].value, bridge.parent(call))))]


def _build_rekey(call, data, bridge):
    text, changes = data
    return [(call, call.with_changes(func=_spelled_as(call.func, text), args=rekeyed(call.args, changes)))]


def _build_partial(partial, data, bridge):
    text, changes = data
    first = partial.args[0]
    args = [first.with_changes(value=_spelled_as(first.value, text)), *rekeyed(partial.args[1:], changes)]
    return [(partial, partial.with_changes(args=args))]


def _build_x64(call, data, bridge):
    text, place, enable = data
    value = call.args[place].value if place is not None else cst.Name("True" if enable else "False")
    return [(call, keep_parens(call, cst.Call(_spelled_as(call.func, text), [cst.Arg(value)])))]


def _build_value(node, data, bridge):
    new, spellings = data
    value = cst.parse_expression(new).visit(Qualify(spellings))
    if node.lpar:
        value = value.with_changes(lpar=node.lpar, rpar=node.rpar)
    else:
        value = parenthesized(value, bridge.parent(node))
    return [(node, value)]


def _build_rehome(statement, data, bridge):
    index, new_module, whole = data
    module = cst.parse_expression(new_module)
    if whole:
        return [(statement, statement.with_changes(module=module))]  # every name moves to the same module
    line, alias = bridge.parent(statement), statement.names[index]
    if not isinstance(line, cst.SimpleStatementLine):
        return None
    rest = [a for a in statement.names if a is not alias]
    rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    moved = cst.ImportFrom(module=module, names=[alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
    kept = line.with_changes(body=[statement.with_changes(names=rest)])
    return [(line, cst.FlattenSentinel([kept, cst.SimpleStatementLine([moved])]))]


def _build_module(statement, data, bridge):
    return [(statement, statement.with_changes(module=cst.parse_expression(data[0])))]


def _build_alias(statement, data, bridge):
    index, new_name = data
    alias = statement.names[index]
    return [(alias, alias.with_changes(name=cst.parse_expression(new_name)))]


def _build_remove(statement, data, bridge):
    return []  # the fix's `remove` does it


def _build_remove_line(statement, data, bridge):
    line = bridge.parent(statement)
    return [(line, cst.RemovalSentinel.REMOVE)] if isinstance(line, cst.SimpleStatementLine) else None


BUILDERS = {
    "name": _build_name, "call": _build_call, "at": _build_at, "tie_in": _build_tie_in, "rekey": _build_rekey,
    "partial": _build_partial, "x64": _build_x64, "value": _build_value, "rehome": _build_rehome,
    "module": _build_module, "alias": _build_alias, "remove": _build_remove, "remove_line": _build_remove_line,
}  # fmt: skip
