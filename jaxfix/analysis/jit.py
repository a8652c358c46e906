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


_COMPILERS = frozenset({"jax.jit", "jax.pmap"})


def _compiles(context, node: cst.CSTNode) -> bool:
    """Whether a binding makes a compiled callable: a def decorated with jit/pmap (`@jax.jit`, `@jax.jit(...)`,
    `@partial(jax.jit, ...)`), or `name = jax.jit(...)` / `jax.pmap(...)` / `partial(jax.jit, ...)(...)`."""
    names = context.names

    def compiler(expr: cst.BaseExpression) -> bool:
        if names.qualified(expr) in _COMPILERS:
            return True
        if isinstance(expr, cst.Call):
            if names.qualified(expr.func) in _COMPILERS:
                return True
            positional = [a for a in expr.args if a.keyword is None]
            return names.qualified(expr.func) == _PARTIAL and bool(positional) and names.qualified(positional[0].value) in _COMPILERS
        return False

    if isinstance(node, cst.Name):  # what LibCST's scopes record for `name = ...`: the target
        target = context.parents.get(node)
        node = context.parents.get(target) if isinstance(target, cst.AssignTarget) else None
    if isinstance(node, cst.FunctionDef):
        return any(compiler(d.decorator) for d in node.decorators)
    if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
        value = node.value
        return names.qualified(value.func) in _COMPILERS or compiler(value.func)
    return False


def calls_compiled(context, call: cst.Call) -> bool:
    """Whether `call` calls a function compiled with `jax.jit`/`jax.pmap`: `jax.jit(f)(x)`, or a name whose every
    binding visible here is a jit-decorated def or a `name = jax.jit(...)` assignment (in any scope: a local
    `step = jax.jit(loss)` counts). Dispatch of such a call is asynchronous: it returns before the work is done."""
    from libcst.metadata import ScopeProvider

    func = call.func
    if isinstance(func, cst.Call):
        names = context.names
        if names.qualified(func.func) in _COMPILERS:
            return True
        return False
    if not isinstance(func, cst.Name):
        return False
    scope = context.wrapper.resolve(ScopeProvider).get(func)
    if scope is None:
        return False
    assignments = list(scope[func.value])
    return bool(assignments) and all(_compiles(context, getattr(a, "node", None)) for a in assignments)
