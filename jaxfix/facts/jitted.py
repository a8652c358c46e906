"""Functions compiled with `jax.jit` whose signature and jit keywords jaxfix can read, on `ast` over the binder:
what the rules that read or edit jit's keywords (static arguments, donation) and the calls of a jitted name share.

A `Jitted` is a def compiled by one of the forms `@jax.jit`, `@jax.jit(...)`, `@partial(jax.jit, ...)`, or
`name = jax.jit(fn, ...)` of an undecorated `fn` defined in the same block; `compiled.compiles` takes each of their
bindings for a compiled callable too (it also takes forms with no readable signature: `jax.jit(jax.grad(f))`,
library jits, `*args`). Static and donated parameters are read with `traced.literals`, the reader
`Traced` seeds parameter kinds with."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterator, Sequence

from jaxfix.diagnostics import ImportSpec
from jaxfix.facts.binder import Binder, Binding, Scope
from jaxfix.facts.flow import activity, block_activity
from jaxfix.facts.spelling import _CAPTURES, _MATCH_CLASS, _MATCH_MAPPING, names_in
from jaxfix.facts.traced import literals

JIT = frozenset({"jax.jit"})
_PARTIAL = "functools.partial"
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True, eq=False)
class Jitted:
    """A function compiled with jit, and where its jit keywords live."""

    name: str  # what call sites call
    function: ast.FunctionDef | ast.AsyncFunctionDef
    binding: ast.AST  # the def, or the `name = jax.jit(fn, ...)` statement
    jit: ast.expr  # `jax.jit` as written
    call: ast.Call | None  # the call that carries keywords: `partial(jax.jit, ...)`, `jax.jit(fn, ...)`, or None
    decorator: ast.expr | None  # a bare `@jax.jit`
    compiler: str = "jax.jit"

    @property
    def bound(self) -> ast.AST:
        """The node the binder binds the name at: the def, or the assignment's target name."""
        return self.binding.targets[0] if type(self.binding) is ast.Assign else self.binding

    @property
    def keywords(self) -> dict[str, ast.expr]:
        """The keywords given to jit (`static_argnums=...`), as written."""
        return {} if self.call is None else {k.arg: k.value for k in self.call.keywords if k.arg is not None}

    @property
    def parameters(self) -> list[str]:
        """The positional parameters' names (what `static_argnums` counts)."""
        arguments = self.function.args
        return [a.arg for a in (*arguments.posonlyargs, *arguments.args)]


def jitted_functions(binder: Binder, compilers: frozenset[str] = JIT) -> list[Jitted]:
    """The module-level functions compiled by the forms above (with `jax.pmap` too where `compilers` names it)."""
    return list(_jitted_in(binder, binder.tree.body, compilers))


def nested_jitted_functions(binder: Binder, function: ast.AST, compilers: frozenset[str] = JIT) -> list[Jitted]:
    """The same forms among the statements of a function's own body (not inside its loops, branches or nested
    functions): a jitted step defined where it is used."""
    return list(_jitted_in(binder, function.body, compilers))


def jitted_methods(binder: Binder, cls: ast.ClassDef, compilers: frozenset[str] = JIT) -> list[Jitted]:
    """The methods of a class compiled with the decorator forms above (`@partial(jax.jit, static_argnums=0)`)."""
    return list(_jitted_in(binder, cls.body, compilers))


def _alone(statements: Sequence[ast.stmt], index: int) -> bool:
    """Whether `statements[index]` shares its lines with no other statement (`a = f; b = g` is one line)."""
    statement = statements[index]
    before = index > 0 and statements[index - 1].end_lineno == statement.lineno
    after = index + 1 < len(statements) and statements[index + 1].lineno == statement.end_lineno
    return not (before or after)


def _unstarred(call: ast.Call) -> bool:
    return not any(type(a) is ast.Starred for a in call.args) and all(k.arg is not None for k in call.keywords)


def _jitted_in(binder: Binder, statements: Sequence[ast.stmt], compilers: frozenset[str]) -> Iterator[Jitted]:
    qualified = binder.qualified
    defs = {s.name: s for s in statements if isinstance(s, _DEFS)}
    for index, stmt in enumerate(statements):
        if isinstance(stmt, _DEFS) and len(stmt.decorator_list) == 1:
            decorator = stmt.decorator_list[0]
            compiler = qualified(decorator)
            if compiler in compilers:
                yield Jitted(stmt.name, stmt, stmt, decorator, None, decorator, compiler)
            elif type(decorator) is ast.Call and _unstarred(decorator):
                callee = qualified(decorator.func)
                positional = decorator.args
                inner = qualified(positional[0]) if len(positional) == 1 else None
                if callee == _PARTIAL and inner in compilers:
                    yield Jitted(stmt.name, stmt, stmt, positional[0], decorator, None, inner)
                elif callee in compilers and not positional:
                    yield Jitted(stmt.name, stmt, stmt, decorator.func, decorator, None, callee)
        elif type(stmt) is ast.Assign and len(stmt.targets) == 1 and _alone(statements, index):
            target, value = stmt.targets[0], stmt.value
            if not (type(target) is ast.Name and type(value) is ast.Call):
                continue
            compiler = qualified(value.func)
            if compiler not in compilers or not _unstarred(value):
                continue
            if len(value.args) != 1 or type(value.args[0]) is not ast.Name:
                continue
            function = defs.get(value.args[0].id)
            if function is not None and not function.decorator_list:
                yield Jitted(target.id, function, stmt, value.func, value, None, compiler)


def partial_spelling(binder: Binder) -> tuple[str, ImportSpec | None]:
    """How a fix writes `functools.partial` in this module (to build `partial(jax.jit, ...)`), and the import it
    needs: through an import of it or of its module (`Binder.spelling`), else `partial` with `from functools import
    partial` where no name `partial` is spelled in the module (`names_in`), else `functools.partial`."""
    spelled, module = binder.spelling(_PARTIAL)
    if module is None:
        return spelled, None
    if "partial" not in names_in(binder.tree):
        return "partial", ImportSpec("functools", "partial")
    return "functools.partial", ImportSpec("functools")


def static_parameters(jitted: Jitted) -> frozenset[str] | None:
    """The parameter names jit treats as static, or None when the keywords cannot be read."""
    return _named_parameters(jitted, "static")


def donated_parameters(jitted: Jitted) -> frozenset[str] | None:
    """The parameter names jit donates (`donate_argnums`/`donate_argnames`), or None when they cannot be read."""
    return _named_parameters(jitted, "donate")


def _named_parameters(jitted: Jitted, prefix: str) -> frozenset[str] | None:
    return named_parameters(jitted.keywords, jitted.parameters, prefix)


def named_parameters(keywords: dict[str, ast.expr], params: list[str], prefix: str) -> frozenset[str] | None:
    """The parameters `{prefix}_argnums` and `{prefix}_argnames` among `keywords` name (pmap's
    `static_broadcasted_argnums` given as `static_argnums`), or None when they cannot be read."""
    found: set = set()
    numbers = keywords.get(f"{prefix}_argnums")
    if numbers is not None:
        values = literals(numbers, (int,))
        if values is None or any(not 0 <= n < len(params) for n in values):
            return None
        found.update(params[n] for n in values)
    names = keywords.get(f"{prefix}_argnames")
    if names is not None:
        values = literals(names, (str, bytes))
        if values is None:
            return None
        found.update(values)
    return frozenset(found)


def binding(binder: Binder, jitted: Jitted) -> Binding | None:
    """The one binding of the jitted name in the scope that binds it, or None where that scope binds it more
    than once (a later def or assignment, an import, a `global` in a function)."""
    scope = binder.scope_of[jitted.bound].binding_target(jitted.name)
    found = scope.bindings.get(jitted.name, [])
    return found[0] if len(found) == 1 and found[0].node is jitted.bound else None


def references(binder: Binder, jitted: Jitted) -> list[ast.Name] | None:
    """Every read of the jitted name that refers to its one binding, in source order; None where the name is
    bound more than once (`binding`)."""
    bound = binding(binder, jitted)
    if bound is None:
        return None
    found = [n for n in binder.nodes_of(ast.Name) if n.id == jitted.name and bound in binder.referents(n)]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def calls_of(binder: Binder, jitted: Jitted) -> list[ast.Call] | None:
    """The calls among `references` (`step(x)`), where the name is bound once; None otherwise."""
    found = references(binder, jitted)
    if found is None:
        return None
    calls = []
    for name in found:
        parent = binder.parent(name)
        if type(parent) is ast.Call and parent.func is name:
            calls.append(parent)
    return calls


def call_sites(binder: Binder, jitted: Jitted) -> list[ast.Call] | None:
    """Every call of the jitted name, or None when the name is bound more than once or also used as a value
    (passed, returned, stored), so that the calls seen are not all the calls."""
    found = references(binder, jitted)
    calls = calls_of(binder, jitted)
    return calls if found is not None and len(calls) == len(found) else None


def only_arithmetic(binder: Binder, body: list[ast.stmt] | ast.expr, name: str, traced: set[str] | frozenset[str]) -> bool:
    """Whether `name` is read in `body` (a function's statements or a lambda's expression), never rebound there,
    and only as an operand of `+ - * /`
    arithmetic that also has a `traced` operand or whose result is returned: code that computes the same when a
    Python number `name` becomes a traced argument. A branch, a shape, a `range` bound, an exponent (`x ** n` is
    repeated multiplication for a Python int), an attribute or keyword of that name, or a nested function that
    spells it would need the Python value."""
    writes = block_activity(body).writes if isinstance(body, list) else activity(body).writes
    if name in writes:
        return False
    roots = body if isinstance(body, list) else [body]
    parents = binder.parents
    uses = 0
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, _SCOPES) and node is not body and name in names_in(node):
                return False  # a nested scope: not followed
            if type(node) is not ast.Name:
                if name in _spelled_here(node):
                    return False  # `x.lr`, `f(lr=...)`: not an operand
                continue
            if node.id != name:
                continue
            top = node
            while type(parents.get(top)) is ast.BinOp and type(parents[top].op) in _ARITHMETIC:
                top = parents[top]
            if top is node:
                return False
            # With a traced operand the result is a traced array already; a Python number that only flows into
            # the result is fine too. Anything else (`int(1 / lr)`) may need a Python value.
            parent = parents.get(top)
            returned = type(parent) is ast.Return or top is body or (
                type(parent) is ast.Tuple and type(parents.get(parent)) is ast.Return
            )
            if not (names_in(top) & set(traced) or returned):
                return False
            uses += 1
    return uses > 0


def _spelled_here(node: ast.AST) -> tuple[str, ...]:
    """The identifiers a node other than a name spells itself (not its children's): where LibCST holds a `Name`."""
    kind = type(node)
    if kind is ast.Attribute:
        return (node.attr,)
    if kind is ast.keyword or kind is ast.arg:
        return (node.arg,) if node.arg is not None else ()
    if kind in (ast.Global, ast.Nonlocal):
        return tuple(node.names)
    if kind is ast.alias:
        return (*node.name.split("."), *((node.asname,) if node.asname else ()))
    if kind is ast.ImportFrom:
        return tuple(node.module.split(".")) if node.module else ()
    if kind is ast.ExceptHandler or kind in _CAPTURES:
        return (node.name,) if node.name else ()
    if kind is _MATCH_MAPPING:
        return (node.rest,) if node.rest else ()
    if kind is _MATCH_CLASS:
        return tuple(node.kwd_attrs)
    return ()


@dataclass(frozen=True, eq=False)
class JitWrapped:
    """A module-level `name = jax.jit(expr, ...)` of something other than an undecorated def of the module
    (`jax.jit(jax.grad(loss))`, a lambda, a `partial`): jitted, but with no signature jaxfix can read."""

    name: str
    binding: ast.Assign
    call: ast.Call  # the `jax.jit(...)` call


def jit_wrapped(binder: Binder) -> list[JitWrapped]:
    """The module-level assignments `name = jax.jit(expr, ...)` that `jitted_functions` does not cover."""
    covered = {j.name for j in jitted_functions(binder)}
    body = binder.tree.body
    found = []
    for index, stmt in enumerate(body):
        if not (type(stmt) is ast.Assign and len(stmt.targets) == 1 and _alone(body, index)):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (type(target) is ast.Name and type(value) is ast.Call) or target.id in covered:
            continue
        one = len(value.args) == 1 and type(value.args[0]) is not ast.Starred
        if binder.qualified(value.func) in JIT and one and all(k.arg is not None for k in value.keywords):
            found.append(JitWrapped(target.id, stmt, value))
    return found


def assignments(binder: Binder, name: str, scope: Scope | None = None) -> list[Binding]:
    """The bindings of `name` in `scope` (the module's by default) that LibCST records as its assignments there,
    which the rules that count them read: a `match` capture is none, and LibCST binds a `:=` in a comprehension
    in the comprehension."""
    scope = binder.module if scope is None else scope
    return [
        b for b in scope.bindings.get(name, ())
        if not isinstance(b.node, _BOUND_CAPTURES) and not (
            type(binder.parents.get(b.node)) is ast.NamedExpr and binder.scope_of[b.node].kind == "comprehension"
        )
    ]


_BOUND_CAPTURES = (*_CAPTURES, *((_MATCH_MAPPING,) if _MATCH_MAPPING is not None else ()))
