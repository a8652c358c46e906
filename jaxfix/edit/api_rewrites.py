"""Building the rewrites of removed or renamed JAX APIs (JF901) on LibCST: a name spelled as the module can name it,
arguments bound to parameters as Python would bind them, and pjit's or the legacy shard_map's arguments mapped onto
the new API's keywords; `None` wherever the mapping is not exact, so that the rule reports without a fix."""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from jaxfix.analysis.syntax import dotted_name
from jaxfix.diagnostics import ImportSpec
from jaxfix.facts.knowledge.deprecations import EXPLICIT_IMPORTS, JIT_KEYWORDS, KEYWORD_RENAMES, SHARD_MAP_POSITIONAL


def spelled(names, qualified: str) -> tuple[cst.BaseExpression, ImportSpec | None]:
    """`names.expression_for`, and the import of the name's module itself where `import jax` does not load it."""
    expr, spec = names.expression_for(qualified)
    module = qualified.rsplit(".", 1)[0]
    if module in EXPLICIT_IMPORTS and names.module_alias(module) is None:
        spec = ImportSpec(module)
    return expr, spec


class Qualify(cst.CSTTransformer):
    """A `value` row's expression with each dotted name spelled as this module can name it."""

    def __init__(self, names) -> None:
        self.names = names
        self.imports: list[ImportSpec] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False  # the outermost dotted name is one qualified name

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        expr, spec = spelled(self.names, dotted_name(original_node))
        if spec is not None:
            self.imports.append(spec)
        return expr


def with_keywords(args: Sequence[cst.Arg], added: dict[str, str]) -> list[cst.Arg]:
    """`args` and then `added` as keyword arguments, a trailing comma kept last."""
    out = list(args)
    new = [cst.Arg(cst.parse_expression(v), keyword=cst.Name(k), equal=TIGHT_EQUAL) for k, v in added.items()]
    if out and isinstance(out[-1].comma, cst.Comma):
        new[-1] = new[-1].with_changes(comma=out[-1].comma)
        out[-1] = out[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return out + new


TIGHT_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def keyword_of(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


def bind_arguments(args: Sequence[cst.Arg], params: Sequence[str], *, required: int) -> dict[str, cst.BaseExpression] | None:
    """Arguments bound to parameter names as Python would; None for `*`/`**`, unknown, repeated or missing ones,
    or keywords given out of order where moving them would reorder a call's side effects."""
    bound: dict[str, cst.BaseExpression] = {}
    order: list[str] = []
    positional = 0
    for arg in args:
        if arg.star:
            return None
        if arg.keyword is None:
            if positional >= len(params):
                return None
            name = params[positional]
            positional += 1
        else:
            name = arg.keyword.value
            if name not in params:
                return None
        if name in bound:
            return None
        bound[name] = arg.value
        order.append(name)
    if any(p not in bound for p in params[:required]):
        return None
    canonical = [p for p in params if p in bound]
    if order != canonical and any(has_effects(bound[n]) for n in order):
        return None
    return bound


def jit_arguments(args: Sequence[cst.Arg], *, positional: Sequence[str]) -> list[cst.Arg] | None:
    """pjit's arguments for jax.jit: positional shardings as keywords, legacy keywords renamed; None if impossible."""
    renames = KEYWORD_RENAMES["jax.experimental.pjit.pjit"]
    out: list[cst.Arg] = []
    seen: set[str] = set()
    index = 0
    for position, arg in enumerate(args):
        if arg.star == "*":
            return None
        if arg.star == "**":
            out.append(arg)
            continue
        if arg.keyword is None:
            if positional and position == 0:
                out.append(arg)  # the function
                continue
            if index >= len(positional):
                return None
            name = positional[index]
            index += 1
            arg = arg.with_changes(keyword=cst.Name(name), equal=TIGHT_EQUAL)
        else:
            name = renames.get(arg.keyword.value, arg.keyword.value)
            if name not in JIT_KEYWORDS:
                return None
            if name != arg.keyword.value:
                arg = arg.with_changes(keyword=cst.Name(name))
        if name in seen:
            return None
        seen.add(name)
        out.append(arg)
    return out


def shard_map_arguments(args: Sequence[cst.Arg], *, positional: bool) -> list[cst.Arg] | None:
    """The legacy shard_map's arguments for jax.shard_map; None if they do not map exactly."""
    out: list[cst.Arg] = []
    seen: set[str] = set()
    for position, arg in enumerate(args):
        if arg.star:
            return None
        if arg.keyword is None:
            if not positional or position >= len(SHARD_MAP_POSITIONAL):
                return None
            if position == 0:
                out.append(arg)
                continue
            name = SHARD_MAP_POSITIONAL[position]
            arg = arg.with_changes(keyword=cst.Name(name), equal=TIGHT_EQUAL)
        else:
            name = KEYWORD_RENAMES["jax.experimental.shard_map.shard_map"].get(arg.keyword.value, arg.keyword.value)
            if name not in SHARD_MAP_POSITIONAL[1:]:
                return None  # `f=` (positional-only now), `auto=` (no equivalent), anything unknown
            if name != arg.keyword.value:
                arg = arg.with_changes(keyword=cst.Name(name))
        if name in seen:
            return None
        seen.add(name)
        out.append(arg)
    if positional and (not out or out[0].keyword is not None):
        return None
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


class _Effects(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node) -> bool:
        self.found = True
        return False

    def visit_Await(self, node) -> bool:
        self.found = True
        return False

    def visit_Yield(self, node) -> bool:
        self.found = True
        return False

    def visit_NamedExpr(self, node) -> bool:
        self.found = True
        return False

    def visit_Lambda(self, node) -> bool:
        return False  # its body does not run here


def has_effects(expr: cst.CSTNode) -> bool:
    """Whether evaluating `expr` may do more than read names (a call, await, yield or walrus inside it)."""
    visitor = _Effects()
    expr.visit(visitor)
    return visitor.found
