"""Giving `jax.jit` one more keyword on LibCST (`donate_argnums=0`, `static_argnames=("n",)`): what the rules that
edit jit's keywords share, JF501 and JF802 from the `ast` nodes of their plans (through the bridge). Which function is jitted and how its keywords are written is decided on `ast` (`jaxfix.facts.jitted`)."""

from __future__ import annotations

import libcst as cst

from jaxfix.diagnostics import ImportSpec

Change = tuple[cst.CSTNode, cst.CSTNode]


def add_jit_keyword(
    module: cst.Module, call: cst.Call | None, decorator: cst.Decorator | None, key: str, value: str,
    partial: tuple[str, ImportSpec | None] | None = None,
) -> tuple[Change, list[ImportSpec]]:
    """The edit that gives jit the keyword `key=value`: appended to `call`, the call that carries jit's keywords
    (`partial(jax.jit, ...)`, `jax.jit(...)`, `jax.jit(fn, ...)`), or, where there is none, the bare `@jax.jit`
    `decorator` turned into `@partial(jax.jit, key=value)`, with `partial` as the module writes it and the import
    that needs (`facts.jitted.partial_spelling`); `module`: the module the nodes are of. Returns (change,
    imports)."""
    new_arg = cst.Arg(keyword=cst.Name(key), value=cst.parse_expression(value), equal=cst.AssignEqual(
        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
    if call is not None:
        args = list(call.args)
        if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:
            # A trailing comma: the new last argument takes it, the old one takes its neighbour's layout.
            between = args[-2].comma if len(args) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            new_arg = new_arg.with_changes(comma=args[-1].comma)
            args[-1] = args[-1].with_changes(comma=between)
        return (call, call.with_changes(args=[*args, new_arg])), []
    assert decorator is not None and partial is not None, "a bare @jax.jit and how to write partial"
    spelled, needed = partial
    code = module.code_for_node(decorator.decorator)
    replacement = cst.parse_expression(f"{spelled}({code}, {key}={value})")
    return (decorator, decorator.with_changes(decorator=replacement)), [needed] if needed is not None else []


def add_jit_keyword_to(bridge, jitted, key: str, value: str, partial: tuple[str, ImportSpec | None] | None):
    """`add_jit_keyword` for a `facts.jitted.Jitted` (its `ast` nodes mapped through `bridge`, an
    `edit.bridge.Bridge`): None where the bridge finds no call carrying its keywords, or no def with its one
    decorator."""
    call = decorator = None
    if jitted.call is not None:
        call = bridge.cst_of(jitted.call)
        if not isinstance(call, cst.Call):
            return None
    else:
        function = bridge.cst_of(jitted.function)
        if not isinstance(function, cst.FunctionDef) or len(function.decorators) != 1:
            return None
        decorator = function.decorators[0]
    return add_jit_keyword(bridge.module, call, decorator, key, value, partial)
