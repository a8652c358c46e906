"""Module-level functions compiled with `jax.jit`, and how their jit keywords are written: what the rules that
edit jit's keywords (donation, static arguments) share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

_JIT = "jax.jit"
_PARTIAL = "functools.partial"


@dataclass
class Jitted:
    """A module-level function compiled with jax.jit, and where its jit keywords live."""

    name: str  # what call sites call
    function: cst.FunctionDef
    binding: cst.CSTNode  # the def, or the `name = jax.jit(fn, ...)` assignment: what the scope analysis binds
    jit: cst.BaseExpression  # `jax.jit` as written
    call: cst.Call | None  # the call that carries keywords: `partial(jax.jit, ...)`, `jax.jit(fn, ...)`, or None
    decorator: cst.Decorator | None  # a bare `@jax.jit`
    static: frozenset[str] = field(default_factory=frozenset)


def jitted_functions(context, module: cst.Module) -> Iterator[Jitted]:
    """The module-level functions compiled with `jax.jit`: `@jax.jit`, `@partial(jax.jit, ...)`, `@jax.jit(...)`,
    and `name = jax.jit(fn, ...)` of an undecorated module-level `fn`."""
    names = context.names
    defs = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and len(stmt.decorators) == 1:
            decorator = stmt.decorators[0].decorator
            if names.qualified(decorator) == _JIT:
                yield Jitted(stmt.name.value, stmt, stmt, decorator, None, stmt.decorators[0])
            elif isinstance(decorator, cst.Call) and not any(a.star for a in decorator.args):
                positional = [a for a in decorator.args if a.keyword is None]
                callee = names.qualified(decorator.func)
                if callee == _PARTIAL and len(positional) == 1 and names.qualified(positional[0].value) == _JIT:
                    yield Jitted(stmt.name.value, stmt, stmt, positional[0].value, decorator, None)
                elif callee == _JIT and not positional:
                    yield Jitted(stmt.name.value, stmt, stmt, decorator.func, decorator, None)
        elif isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            assign = stmt.body[0]
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
                continue
            target, value = assign.targets[0].target, assign.value
            if not (isinstance(target, cst.Name) and isinstance(value, cst.Call)):
                continue
            if names.qualified(value.func) != _JIT or any(a.star for a in value.args):
                continue
            positional = [a for a in value.args if a.keyword is None]
            if len(positional) != 1 or not isinstance(positional[0].value, cst.Name):
                continue
            function = defs.get(positional[0].value.value)
            if function is not None and not function.decorators:
                yield Jitted(target.value, function, assign, value.func, value, None)


def jit_keywords(jitted: Jitted) -> dict[str, cst.BaseExpression]:
    """The keywords given to jit (`static_argnums=...`), as written."""
    return {} if jitted.call is None else {a.keyword.value: a.value for a in jitted.call.args if a.keyword}


def static_parameters(keywords: dict[str, cst.BaseExpression], params: list[str]) -> frozenset[str] | None:
    """The parameter names jit treats as static, or None when the keywords cannot be read."""
    static: set[str] = set()
    for key in ("static_argnums", "static_argnames"):
        value = keywords.get(key)
        if value is None:
            continue
        items = value.elements if isinstance(value, (cst.Tuple, cst.List)) else [value]
        for item in items:
            item = item.value if isinstance(item, cst.BaseElement) else item
            if key == "static_argnums" and isinstance(item, cst.Integer) and int(item.value) < len(params):
                static.add(params[int(item.value)])
            elif key == "static_argnames" and isinstance(item, cst.SimpleString):
                static.add(item.evaluated_value)
            else:
                return None
    return frozenset(static)


def call_sites(context, jitted: Jitted) -> list[cst.Call] | None:
    """Every call of the jitted name in the module, or None when the name is bound more than once or also used
    as a value (passed, returned, stored), so that the calls seen are not all the calls."""
    from libcst.metadata import ScopeProvider

    scope = context.wrapper.resolve(ScopeProvider)[context.module]
    assignments = list(scope.assignments[jitted.name])
    if len(assignments) != 1:
        return None
    node = assignments[0].node
    if node is not jitted.binding and not (
        isinstance(jitted.binding, cst.Assign) and node is jitted.binding.targets[0].target
    ):
        return None
    calls = []
    for access in assignments[0].references:
        parent = context.parents.get(access.node)
        if not (isinstance(parent, cst.Call) and parent.func is access.node):
            return None
        calls.append(parent)
    return calls


def add_jit_keyword(context, jitted: Jitted, key: str, value: str):
    """The edit that gives jit one more keyword (`donate_argnums=0`): appended to the call that carries its
    keywords, or a bare `@jax.jit` turned into `@partial(jax.jit, key=value)`. Returns (change, imports)."""
    new_arg = cst.Arg(keyword=cst.Name(key), value=cst.parse_expression(value), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
    if jitted.call is not None:
        args = list(jitted.call.args)
        if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:
            # A trailing comma: the new last argument takes it, the old one takes its neighbour's layout.
            between = args[-2].comma if len(args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            new_arg = new_arg.with_changes(comma=args[-1].comma)
            args[-1] = args[-1].with_changes(comma=between)
        return (jitted.call, jitted.call.with_changes(args=[*args, new_arg])), []
    partial, needed = _partial(context)
    code = context.code_for(jitted.jit)
    replacement = cst.parse_expression(f"{partial}({code}, {key}={value})")
    return (jitted.decorator, jitted.decorator.with_changes(decorator=replacement)), needed


def _partial(context):
    from jaxfix.analysis.syntax import walk
    from jaxfix.diagnostics import ImportSpec

    expression, needed = context.names.expression_for(_PARTIAL)
    if needed is None:
        return cst.Module([]).code_for_node(expression), []
    if "partial" not in {n.value for n in walk(context.module) if isinstance(n, cst.Name)}:
        return "partial", [ImportSpec("functools", "partial")]
    return "functools.partial", [ImportSpec("functools")]
