"""Module-level functions compiled with `jax.jit`, and how their jit keywords are written, on LibCST, for the rule
that is still a visitor (JF501, through analysis/donation.py). The same facts on `ast` are `jaxfix/facts/jitted.py`,
which the rules on `check` read (JF503, JF504, JF802, JF804); the edit that adds a keyword is
`jaxfix/edit/jit.py`."""

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
    compiler: str = _JIT  # "jax.jit", or "jax.pmap" where the caller asked for pmapped functions too


def jitted_functions(context, module: cst.Module, compilers: frozenset[str] = frozenset({_JIT})) -> Iterator[Jitted]:
    """The module-level functions compiled with `jax.jit`: `@jax.jit`, `@partial(jax.jit, ...)`, `@jax.jit(...)`,
    and `name = jax.jit(fn, ...)` of an undecorated module-level `fn` (the same with `jax.pmap` where
    `compilers` names it)."""
    return _jitted_in(context, module.body, compilers)


def nested_jitted_functions(
    context, function: cst.FunctionDef, compilers: frozenset[str] = frozenset({_JIT})
) -> Iterator[Jitted]:
    """The same forms defined by the statements of a function's own body (not inside its loops, branches or
    nested functions): a jitted step defined where it is used."""
    from jaxfix.analysis.syntax import body_statements

    return _jitted_in(context, list(body_statements(function.body)), compilers)


def jitted_methods(context, cls: cst.ClassDef, compilers: frozenset[str] = frozenset({_JIT})) -> Iterator[Jitted]:
    """The methods of a class compiled with the decorator forms above (`@partial(jax.jit, static_argnums=0)`)."""
    return _jitted_in(context, list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else [], compilers)


def _jitted_in(context, statements, compilers: frozenset[str]) -> Iterator[Jitted]:
    names = context.names
    defs = {s.name.value: s for s in statements if isinstance(s, cst.FunctionDef)}
    for stmt in statements:
        if isinstance(stmt, cst.FunctionDef) and len(stmt.decorators) == 1:
            decorator = stmt.decorators[0].decorator
            compiler = names.qualified(decorator)
            if compiler in compilers:
                yield Jitted(stmt.name.value, stmt, stmt, decorator, None, stmt.decorators[0], compiler=compiler)
            elif isinstance(decorator, cst.Call) and not any(a.star for a in decorator.args):
                positional = [a for a in decorator.args if a.keyword is None]
                callee = names.qualified(decorator.func)
                inner = names.qualified(positional[0].value) if len(positional) == 1 else None
                if callee == _PARTIAL and inner in compilers:
                    yield Jitted(stmt.name.value, stmt, stmt, positional[0].value, decorator, None, compiler=inner)
                elif callee in compilers and not positional:
                    yield Jitted(stmt.name.value, stmt, stmt, decorator.func, decorator, None, compiler=callee)
        elif isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            assign = stmt.body[0]
            if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
                continue
            target, value = assign.targets[0].target, assign.value
            if not (isinstance(target, cst.Name) and isinstance(value, cst.Call)):
                continue
            compiler = names.qualified(value.func)
            if compiler not in compilers or any(a.star for a in value.args):
                continue
            positional = [a for a in value.args if a.keyword is None]
            if len(positional) != 1 or not isinstance(positional[0].value, cst.Name):
                continue
            function = defs.get(positional[0].value.value)
            if function is not None and not function.decorators:
                yield Jitted(target.value, function, assign, value.func, value, None, compiler=compiler)


def jit_keywords(jitted: Jitted) -> dict[str, cst.BaseExpression]:
    """The keywords given to jit (`static_argnums=...`), as written."""
    return {} if jitted.call is None else {a.keyword.value: a.value for a in jitted.call.args if a.keyword}


def static_parameters(keywords: dict[str, cst.BaseExpression], params: list[str]) -> frozenset[str] | None:
    """The parameter names jit treats as static, or None when the keywords cannot be read."""
    return _named_parameters(keywords, params, "static")


def _named_parameters(keywords: dict[str, cst.BaseExpression], params: list[str], prefix: str) -> frozenset[str] | None:
    found: set[str] = set()
    for key in (f"{prefix}_argnums", f"{prefix}_argnames"):
        value = keywords.get(key)
        if value is None:
            continue
        items = value.elements if isinstance(value, (cst.Tuple, cst.List)) else [value]
        for item in items:
            item = item.value if isinstance(item, cst.BaseElement) else item
            if key.endswith("argnums") and isinstance(item, cst.Integer) and int(item.value) < len(params):
                found.add(params[int(item.value)])
            elif key.endswith("argnames") and isinstance(item, cst.SimpleString):
                found.add(item.evaluated_value)
            else:
                return None
    return frozenset(found)


def call_sites(context, jitted: Jitted) -> list[cst.Call] | None:
    """Every call of the jitted name in the scope that binds it, or None when the name is bound more than once
    or also used as a value (passed, returned, stored), so that the calls seen are not all the calls."""
    from libcst.metadata import ScopeProvider

    scopes = context.wrapper.resolve(ScopeProvider)
    anchor = jitted.function if jitted.binding is jitted.function else jitted.binding
    scope = scopes.get(anchor) or scopes[context.module]
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
