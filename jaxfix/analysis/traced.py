"""Which functions run under JAX tracing, and which values inside them are traced, asked of LibCST nodes.

The fact lives on `ast` in jaxfix/facts/traced.py (`Traced`: how functions are found traced, how values get the
kinds STATIC, UNKNOWN, TRACED). This adapter answers the rules that still hold LibCST nodes: it maps each node
to its `ast` node through jaxfix/edit/bridge.py, asks the fact, and maps functions and calls back. An expression
a rule builds (no node of this module) is read from its code, where it stands in `within`.
"""

from __future__ import annotations

import ast
from typing import Iterator, Union

import libcst as cst

from jaxfix.edit.bridge import Bridge
from jaxfix.facts.knowledge.jax import (  # noqa: F401 (read from here by other analyses until they import knowledge)
    ARRAY_NAMESPACES, FUNCTION_MAKERS, HOST_CALLBACKS, STATIC_ATTRIBUTES, STATIC_CALLS, TREE_MAPS, TREE_STRUCTURES,
)
from jaxfix.facts.knowledge.tables import (  # noqa: F401
    COMPILED_CALLABLES, COMPILING, LAX_BODIES, REVERSE_MODE, STAGING, TRANSFORMS,
    FILTERED as _FILTERED, GRAD_LIKE as _GRAD_LIKE, JIT_LIKE as _JIT_LIKE, VMAP_LIKE as _VMAP_LIKE,
)
from jaxfix.facts.model import ModuleModel
from jaxfix.facts.traced import _PARTIAL, NOT_COMPILED, Kind, Traced, join  # noqa: F401 (Kind, join, NOT_COMPILED: read from here too)

FunctionNode = Union[cst.FunctionDef, cst.Lambda]

class TracedAnalysis:
    """`facts.traced.Traced` of the module, asked with LibCST nodes."""

    def __init__(self, context: ModuleModel) -> None:
        self._context = context
        screen = context.screen
        self.fact: Traced = screen.traced_fact  # one per module: the screens ask it too
        self._bridge = Bridge(context.module, screen.tree, context.positions, screen.text)
        self._ast: dict[cst.CSTNode, ast.AST | None] = {}
        self._cst: dict[ast.AST, cst.CSTNode | None] = {}
        self._enclosing: dict[cst.CSTNode, FunctionNode | None] = {}
        self._defs: dict[cst.FunctionDef, ast.AST] | None = None  # each def, paired without positions

    def _ast_of(self, node: cst.CSTNode) -> ast.AST | None:
        try:
            return self._ast[node]
        except KeyError:
            found = self._ast[node] = self._bridge.ast_of(node)
            return found

    def _cst_of(self, node: ast.AST) -> cst.CSTNode | None:
        try:
            return self._cst[node]
        except KeyError:
            found = self._cst[node] = self._bridge.cst_of(node)
            return found

    def _function(self, function: FunctionNode | None) -> ast.AST | None:
        if function is None:
            return None
        if self._defs is None:
            self._defs = {}
            _pair_defs(self._context.module.body, self.fact.tree.body, self._defs)
        found = self._defs.get(function)
        return found if found is not None else self._ast_of(function)

    # ---- queries -------------------------------------------------------------------------------------------

    def is_traced(self, function: FunctionNode) -> bool:
        found = self._function(function)
        return found is not None and self.fact.is_traced(found)

    def enclosing_function(self, node: cst.CSTNode) -> FunctionNode | None:
        """The innermost function or lambda whose code holds `node` (its body, decorators, defaults...), or None."""
        enclosing, parents = self._enclosing, self._context.parents
        passed = []
        found = None
        while True:
            if node in enclosing:
                found = enclosing[node]
                break
            parent = parents.get(node)  # None: not a node of this module, or the module
            if parent is None or isinstance(parent, (cst.FunctionDef, cst.Lambda)):
                found = parent
                passed.append(node)
                break
            passed.append(node)
            node = parent
        for seen in passed:
            enclosing[seen] = found
        return found

    def in_traced_code(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs while JAX traces: inside a traced function's code."""
        function = self.enclosing_function(node)
        return function is not None and self.is_traced(function)

    def guarded(self, node: cst.CSTNode) -> bool:
        """Whether `node` sits in the body of a `try` (in its own function) that catches the error a traced value
        raises in a Python test (`Traced.guarded`)."""
        found = self._ast_of(node)
        return found is not None and self.fact.guarded(found)

    def param_kind(self, function: FunctionNode, name: str) -> Kind:
        return self.fact.param_kind(self._function(function), name)

    def kind(
        self, expr: cst.BaseExpression, *, within: FunctionNode | None = None, assume: dict[str, Kind] | None = None
    ) -> Kind:
        """The kind of an expression where it stands (inside its enclosing function, or `within` for an
        expression built by a rule), optionally as if the names in `assume` had those kinds (a loop rule asks
        what a body computes once its carried variables are traced)."""
        found = self._ast_of(expr)
        if found is None:  # built by a rule, or a part `ast` has no node for: its code, read where it stands
            function = within if within is not None else self.enclosing_function(expr)
            within = function
            found = _expression(self._context.module.code_for_node(expr))
            if found is None:
                return Kind.UNKNOWN
        return self.fact.kind(found, within=self._function(within), assume=assume)

    def traced_functions(self) -> Iterator[FunctionNode]:
        return (self._cst_of(f) for f in self.fact.traced_functions())

    def transforms(self, function: FunctionNode) -> frozenset[str]:
        """`Traced.transforms`: the transformations through which this module traces `function`."""
        found = self._function(function)
        return frozenset() if found is None else self.fact.transforms(found)

    def staged(self, function: FunctionNode) -> bool:
        found = self._function(function)
        return found is not None and self.fact.staged(found)

    def compiled(self, function: FunctionNode) -> bool:
        found = self._function(function)
        return found is not None and self.fact.compiled(found)

    def seeded_kind(self, function: FunctionNode, name: str) -> Kind | None:
        found = self._function(function)
        return None if found is None else self.fact.seeded_kind(found, name)

    def traced_call_sites(self, function: FunctionNode) -> list[cst.Call]:
        found = self._function(function)
        return [] if found is None else [self._cst_of(call) for call in self.fact.traced_call_sites(found)]


_COMPOUND = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef), cst.ClassDef: (ast.ClassDef,), cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor), cst.While: (ast.While,), cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,), cst.Match: (ast.Match,), **({cst.TryStar: (ast.TryStar,)} if hasattr(ast, "TryStar") else {}),
}
_AST_COMPOUND = tuple(kind for kinds in _COMPOUND.values() for kind in kinds)


def _pair_defs(statements, nodes: list[ast.stmt], found: dict) -> None:
    """Each def among LibCST's `statements` with its `ast` node among `nodes`, the same statements of the same
    text: their compound statements correspond one to one, in order (a simple statement line holds none), so
    defs pair without the positions that the bridge computes."""
    spelled = [s for s in statements if isinstance(s, cst.BaseCompoundStatement)]
    parsed = [n for n in nodes if isinstance(n, _AST_COMPOUND)]
    if len(spelled) != len(parsed):
        return  # not the same statements: the bridge answers instead
    for statement, node in zip(spelled, parsed):
        if not isinstance(node, _COMPOUND.get(type(statement), ())):
            return
        if isinstance(statement, cst.FunctionDef):
            found[statement] = node
        for inner, inner_nodes in _blocks(statement, node):
            _pair_defs(inner, inner_nodes, found)


def _blocks(statement: cst.BaseCompoundStatement, node: ast.stmt):
    """The statement lists of a compound statement on both trees, paired."""
    body = lambda suite: getattr(suite, "body", ())  # noqa: E731  (a one-line suite holds no compound statement)
    if isinstance(statement, cst.Match):
        for case, parsed in zip(statement.cases, node.cases):
            yield body(case.body), parsed.body
        return
    yield body(statement.body), node.body
    if isinstance(statement, cst.If):
        if isinstance(statement.orelse, cst.If):  # elif: the `ast` else branch holds that If
            yield [statement.orelse], node.orelse
        elif statement.orelse is not None:
            yield body(statement.orelse.body), node.orelse
    elif isinstance(statement, (cst.For, cst.While)):
        if statement.orelse is not None:
            yield body(statement.orelse.body), node.orelse
    elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.With)):  # try
        for handler, parsed in zip(statement.handlers, node.handlers):
            yield body(handler.body), parsed.body
        if statement.orelse is not None:
            yield body(statement.orelse.body), node.orelse
        if statement.finalbody is not None:
            yield body(statement.finalbody.body), node.finalbody


def _expression(code: str) -> ast.expr | None:
    try:
        return ast.parse(f"({code})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def qualified_defs(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """The module's functions by the names the project index gives them (`ast_syntax.ast_qualified_defs`): `f` at
    module level, `C.m` for a method of a module-level class, `f.<locals>.g` for a def nested in a function."""
    found: dict[str, cst.FunctionDef] = {}

    def blocks(statement) -> list:
        """The statement lists inside a compound statement (if/elif/else, try/except/finally, for, while, with)."""
        found_blocks = []
        for name in ("body", "orelse", "finalbody"):
            part = getattr(statement, name, None)
            while isinstance(part, cst.If):  # elif
                found_blocks.append(part.body)
                part = part.orelse
            if part is not None and hasattr(part, "body"):
                found_blocks.append(part.body if isinstance(part, (cst.Else, cst.Finally)) else part)
        found_blocks += [h.body for h in getattr(statement, "handlers", ())]
        found_blocks += [c.body for c in getattr(statement, "cases", ())]
        return [getattr(b, "body", ()) for b in found_blocks]

    def in_function(statements, qual: str) -> None:
        for statement in statements:
            if isinstance(statement, cst.FunctionDef):
                inner = f"{qual}.<locals>.{statement.name.value}"
                found[inner] = statement
                in_function(statement.body.body, inner)
            elif isinstance(statement, cst.BaseCompoundStatement) and not isinstance(statement, cst.ClassDef):
                for block in blocks(statement):
                    in_function(block, qual)

    def walk(statements, prefix: str) -> None:
        for statement in statements:
            if isinstance(statement, cst.FunctionDef):
                found[prefix + statement.name.value] = statement
                in_function(statement.body.body, prefix + statement.name.value)
            elif isinstance(statement, cst.ClassDef) and not prefix:
                walk(statement.body.body, statement.name.value + ".")
            elif isinstance(statement, (cst.If, cst.Try, cst.TryStar)) and not prefix:
                for block in blocks(statement):
                    walk(block, prefix)

    walk(module.body, "")
    return found


