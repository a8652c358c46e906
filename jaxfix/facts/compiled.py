"""Which calls call a function compiled with `jax.jit`/`jax.pmap` (or a library's jit): on `ast`, over the binder.
Dispatch of such a call is asynchronous (JF702, JF703 read it) and its arguments become the compiled function's
pytree (JF704)."""

from __future__ import annotations

import ast

from jaxfix.facts.binder import Binder
from jaxfix.facts.knowledge.tables import COMPILED_CALLABLES as _COMPILERS

_PARTIAL = "functools.partial"


def calls_compiled(binder: Binder, call: ast.Call) -> bool:
    """Whether `call` calls a compiled function: `jax.jit(f)(x)`, or a name whose every binding visible here is a
    jit-decorated def or a `name = jax.jit(...)` assignment (in any scope: a local `step = jax.jit(loss)` counts)."""
    func = call.func
    if type(func) is ast.Call:
        return binder.qualified(func.func) in _COMPILERS
    if type(func) is not ast.Name:
        return False
    scope = binder.scope_of.get(func)
    if scope is None:
        return False
    bindings = scope.resolve(func.id)
    return bool(bindings) and all(compiles(binder, b.node) for b in bindings)


def compiles(binder: Binder, node: ast.AST | None) -> bool:
    """Whether a binding makes a compiled callable: a def decorated with jit/pmap (`@jax.jit`, `@jax.jit(...)`,
    `@partial(jax.jit, ...)`), or `name = jax.jit(...)` / `jax.pmap(...)` / `partial(jax.jit, ...)(...)`; `node`
    is what the binder records: the def, or the name a single-target `=` assigns."""

    def compiler(expr: ast.AST) -> bool:
        if binder.qualified(expr) in _COMPILERS:
            return True
        if type(expr) is ast.Call:
            callee = binder.qualified(expr.func)
            if callee in _COMPILERS:
                return True
            # LibCST's arguments without a keyword, in the order written: `*a` and `**k` count
            positional = [a.value if type(a) is ast.Starred else a for a in expr.args]
            positional += [k.value for k in expr.keywords if k.arg is None]
            return callee == _PARTIAL and bool(positional) and binder.qualified(positional[0]) in _COMPILERS
        return False

    if type(node) is ast.Name:
        statement = binder.parent(node)
        if not (type(statement) is ast.Assign and any(target is node for target in statement.targets)):
            return False
        value = statement.value
        return type(value) is ast.Call and (binder.qualified(value.func) in _COMPILERS or compiler(value.func))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return any(compiler(d) for d in node.decorator_list)
    return False
