"""Cheap facts about one module from Python's own `ast`, for the engine's screens (`Codemod.may_match_tree`).

Each LibCST metadata provider is a full traversal (about 0.3 s for 3000 lines, where `ast` parses the same file in
0.01 s), so before a codemod sees a module the engine asks it whether it can possibly find anything there. Each
fact here over-approximates one of `jaxfix.analysis` (it may say "may" for nothing, never "no" for something):
- names (names.py): imports anywhere in the module count everywhere, whatever scope, shadowing or
  `try`/`except ImportError` shim they sit in, and every import of a name counts;
- arrays: what facts/values.py proves on `ast` itself (JF401 and JF705 ask it in `check`); the evidence of
  being an array (`_may_hold_array_value`) that the unmoved rules' screens read;
- traced code (traced.py): TracedAnalysis's seeds and propagation, with functions matched by name instead of
  scope and every name an argument of a transformation mentions taken as a function passed to it.
A screen built on these facts is sound as long as it says "no" only where they rule a finding out.

Screens run on every file, so their own cost counts: most facts read one index that a single pass builds
(`Screen._index`: every node in `ast.walk`'s order, where it sits by type, and its innermost function), and a rule
asks for the node types it needs (`nodes_of`, `imported_calls`) instead of walking the whole tree again.

How names mirror LibCST: a qualified name with source IMPORT comes from an import statement whose local name
(`jnp` of `import jax.numpy as jnp`, `tree_map` of `from jax import tree_map`, `jax` of `import jax.numpy`)
starts the name node's dotted spelling; the rest of the spelling is appended. Relative imports give names that
start with "." (no JAX name), a star import binds nothing. Every `cst.Name` gets a qualified name, including an
attribute's name (`tree_map` of `obj.tree_map`), a keyword or a parameter, so `names()` yields those alone too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property, wraps
from operator import attrgetter
from typing import Callable, Iterable, Iterator, Sequence

from jaxfix.analysis import ast_flow, predicates, shapes
from jaxfix.facts import predicates as fact_predicates
from jaxfix.analysis.ast_flow import target_names as ast_target_names  # screens' name for it
from jaxfix.analysis.ast_syntax import ast_qualified_defs, dotted
from jaxfix.analysis.dataflow import _ACCEPTS_SEQUENCES, ARRAY_METHODS
from jaxfix.analysis.kinds import STATIC, TRACED
from jaxfix.analysis.traced import ARRAY_NAMESPACES, LAX_BODIES, STATIC_CALLS, TRANSFORMS
from jaxfix.facts.binder import Binder
from jaxfix.facts.knowledge import jaxtyping
from jaxfix.facts.positions import Positions
from jaxfix.facts.imports import module_imports
from jaxfix.facts.traced import Kind, Traced
from jaxfix.facts.knowledge.tables import (
    ARRAY_ANNOTATIONS, BARE_ARRAY_ANNOTATION_NAMES, TRACED_ARRAY_ANNOTATIONS,
)

_ID, _ATTR = attrgetter("id"), attrgetter("attr")

# `ast` nodes with identifiers that LibCST keeps as `Name` nodes (besides Name, Attribute, alias, ImportFrom).
_NAMED: dict[type, tuple[str, ...]] = {
    ast.arg: ("arg",),
    ast.keyword: ("arg",),
    ast.FunctionDef: ("name",),
    ast.AsyncFunctionDef: ("name",),
    ast.ClassDef: ("name",),
    ast.ExceptHandler: ("name",),
    ast.Global: ("names",),
    ast.Nonlocal: ("names",),
    ast.MatchAs: ("name",),
    ast.MatchStar: ("name",),
    ast.MatchMapping: ("rest",),
    ast.MatchClass: ("kwd_attrs",),
    **{getattr(ast, kind): ("name",) for kind in ("TypeVar", "ParamSpec", "TypeVarTuple") if hasattr(ast, kind)},
}
_TRACING = frozenset(TRANSFORMS) | frozenset(LAX_BODIES)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_FUNCTION_TYPES = frozenset(_FUNCTIONS)
_STATEMENT_BINDERS = (
    ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.ExceptHandler, ast.Import, ast.ImportFrom, ast.ClassDef
)
_SCOPE_BINDINGS = (  # the nodes `Screen._add_binding` reads
    ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.Global, ast.Nonlocal, *_STATEMENT_BINDERS
)
_ARRAY_EVIDENCE = frozenset({"shape", "ndim", "dtype", "size", "at", "T", "astype", "reshape"})  # `x.shape`: x is an array
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
@dataclass
class _Scope:
    """One function's bindings as the tracer screens need them."""

    parent: "_Scope | None"
    bound: set[str] = field(default_factory=set)  # every name the function binds
    tracers: set[str] = field(default_factory=set)  # parameters without default, `+=` and `:=` targets
    params: set[str] = field(default_factory=set)  # the parameters without default among `tracers`
    function: ast.AST | None = None  # the def or lambda
    values: list[tuple[str, ast.expr | None]] = field(default_factory=list)  # (name, value) of assignments
    arrays: set[str] = field(default_factory=set)  # annotated parameters and assigned names
    evidence: set[str] = field(default_factory=set)  # names used as only arrays are, here or in nested functions
    solved: frozenset[str] | None = None  # the names that may hold tracers
    solved_strict: frozenset[str] | None = None  # the same, with parameters only of `_Traced.param_seeds`


@dataclass
class _Traced:
    functions: set[int] = field(default_factory=set)  # id() of the functions TracedAnalysis may trace
    param_seeds: set[int] = field(default_factory=set)  # id() of the functions whose parameters may be tracers


@dataclass
class _Index:
    """Every node of the module in `ast.walk`'s order (expression contexts left out), with two facts per node (lists
    parallel to `nodes`)."""

    nodes: list[ast.AST]
    owners: list[ast.AST | None]  # the innermost function around the node, its decorators, defaults and annotations included
    scopes: list[ast.AST | None]  # the innermost function whose body (a lambda's expression) holds the node
    positions: dict[type, list[int]]  # node type: the positions in `nodes` of the nodes of that exact type


class Screen:
    """One module as the screens see it: its text, and its `ast` tree parsed on first use (or given, when the
    engine already parsed it to check the syntax)."""

    def __init__(self, text: str, tree: ast.Module | None = None, project=None) -> None:
        """`project`: the module's `ModuleFacts` (project.py): functions other modules or library conventions
        trace, which every traced-code fact here counts as seeds."""
        self.text = text
        if tree is not None:
            self.tree = tree
        self.project = project

    @cached_property
    def qualified_defs(self) -> dict[str, ast.AST]:
        """The module's defs by the names the project index gives them (`f`, `C.m`, `f.<locals>.g`)."""
        return ast_qualified_defs(self.tree)

    @cached_property
    def project_seeds(self) -> list[ast.AST]:
        """The defs of this module that the project's facts say are traced (by their qualified names)."""
        if not self.project or not self.project.traced:
            return []
        found = self.qualified_defs
        return [found[q] for q in self.project.traced if q in found]

    def project_traced_params(self, function: ast.AST) -> set[str]:
        """The parameters of a def that the project's facts make TRACED (`project_seeds`)."""
        if not self.project or not self.project.traced:
            return set()
        if not hasattr(self, "_project_params"):
            by_node = {id(node): q for q, node in self.qualified_defs.items()}
            self._project_params = {
                node: {p for p, k in self.project.traced[by_node[node]][1].items() if k == TRACED}
                for node in by_node if by_node[node] in self.project.traced
            }
        return self._project_params.get(id(function), set())

    @cached_property
    def positions(self) -> Positions:
        """Where its nodes lie as LibCST places them (`jaxfix.facts.positions`, the one helper facts share)."""
        return Positions(self.text)

    @cached_property
    def tree(self) -> ast.Module:
        """The module's `ast`; raises SyntaxError (or ValueError) where Python cannot parse it."""
        return compile(self.text, "<screen>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)

    @cached_property
    def binder(self) -> Binder:
        """The module's names (scopes, bindings, imports): one pass over `tree`, shared with ModuleContext."""
        return Binder(self.tree)

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node, in `ast.walk`'s order, but the expression contexts (a Name's `ctx`)."""
        return self._index.nodes

    def nodes_of(self, *types: type[ast.AST]) -> list[ast.AST]:
        """The nodes of these types (subclasses included), type by type, each in `nodes`' order: a look-up where
        a walk of the whole tree would visit every node."""
        nodes = self._index.nodes
        return [nodes[position] for position in self._positions(types)]

    def nodes_in_order(self, *types: type[ast.AST]) -> list[ast.AST]:
        """The nodes of these types in `nodes`' order (where the order of different types counts)."""
        nodes = self._index.nodes
        return [nodes[position] for position in sorted(self._positions(types))]

    def _positions(self, types: tuple[type[ast.AST], ...]) -> list[int]:
        """The positions in `nodes` of the nodes of these types (subclasses included), type by type."""
        positions = self._index.positions
        if len(types) == 1 and types[0] in positions:
            return positions[types[0]]
        return [p for kind, found in positions.items() if issubclass(kind, types) for p in found]

    @cached_property
    def _index(self) -> _Index:
        """One pass over the tree for what most queries need: each node's type and its functions. It reads the
        fields itself (what `ast.iter_child_nodes` does, without the fields that never hold a node)."""
        nodes: list[ast.AST] = [self.tree]
        owners: list[ast.AST | None] = [None]
        scopes: list[ast.AST | None] = [None]
        positions: dict[type, list[int]] = {}
        fields_of: dict[type, tuple[str, ...]] = {}
        add_node, add_owner, add_scope = nodes.append, owners.append, scopes.append
        for position, node in enumerate(nodes):  # a breadth-first walk: the list grows as it is read
            kind = type(node)
            found = positions.get(kind)
            if found is None:
                positions[kind] = [position]
                fields = fields_of[kind] = _child_fields(kind)
            else:
                found.append(position)
                fields = fields_of[kind]
            if not fields:
                continue
            function = kind in _FUNCTION_TYPES
            owner = node if function else owners[position]
            scope = scopes[position]
            for name in fields:
                value = getattr(node, name, None)
                inner = node if function and name == "body" else scope
                if isinstance(value, ast.AST):
                    add_node(value)
                    add_owner(owner)
                    add_scope(inner)
                elif isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.AST):
                            add_node(item)
                            add_owner(owner)
                            add_scope(inner)
        return _Index(nodes, owners, scopes, positions)

    # ---- imports -----------------------------------------------------------------------------------------------

    @cached_property
    def imports(self) -> dict[str, set[str]]:
        """Local name → every full name an absolute import anywhere in the module binds to it
        (`import jax.numpy as jnp`: jnp → jax.numpy; `import jax.numpy`: jax → jax; `from jax import lax`: lax → jax.lax):
        `facts.imports.module_imports`."""
        return module_imports(self.binder)

    def qualified_names(self, parts: Sequence[str]) -> Iterator[str]:
        """Every imported name that a dotted spelling (`("jnp", "zeros")`) may stand for: a superset of what
        LibCST's QualifiedNameProvider gives it with source IMPORT, in any scope of this module."""
        rest = ".".join(parts[1:])
        for full in self.imports.get(parts[0], ()):
            yield f"{full}.{rest}" if rest else full

    def may_resolve_to(self, expr: ast.expr, names: Iterable[str] | frozenset[str]) -> bool:
        """Whether a dotted expression may refer, through some import, to one of `names` (`qualified_names` of
        its `dotted` spelling, in one walk down the attributes: screens ask this of ~400k expressions on 1,400
        real files, most of them `self.f`, `x.sum` or `len`, decided at the head)."""
        attributes = []
        while isinstance(expr, ast.Attribute):
            attributes.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return False
        bound = self.imports.get(expr.id)
        if not bound:
            return False
        if not attributes:
            return any(full in names for full in bound)
        rest = ".".join(reversed(attributes))
        return any(f"{full}.{rest}" in names for full in bound)

    @cached_property
    def imported_calls(self) -> list[ast.Call]:
        """The calls whose callee is a name or dotted name that starts with an import-bound name (`jnp.zeros(3)`,
        not `self.f()`, `x.sum()` or `len(x)`): the only calls that `may_resolve_to` can match."""
        return [call for call in self.nodes_of(ast.Call) if self._may_be_imported(call.func)]

    def _may_be_imported(self, expr: ast.AST) -> bool:
        """Whether a dotted expression starts with an import-bound name (`dotted(expr)[0] in imports`)."""
        while isinstance(expr, ast.Attribute):
            expr = expr.value
        return isinstance(expr, ast.Name) and expr.id in self.imports

    # ---- names -------------------------------------------------------------------------------------------------

    def names(self) -> set[tuple[str, ...]]:
        """Every spelling that LibCST may ask a qualified name for, split at its dots, with import-bound first
        parts only: each name and dotted attribute chain, each attribute, parameter, keyword, function, class and
        other identifier on its own, and each dotted prefix of an import's module and names."""
        bound = self.imports
        words = set(map(_ID, self.nodes_of(ast.Name)))  # identifiers spelled alone
        found: set[tuple[str, ...]] = set()
        attributes = self.nodes_of(ast.Attribute)
        words.update(map(_ATTR, attributes))
        for node in attributes:  # `dotted(node)` where `_may_be_imported(node)`, in one walk down
            parts = [node.attr]
            head = node.value
            while type(head) is ast.Attribute:
                parts.append(head.attr)
                head = head.value
            if type(head) is ast.Name and head.id in bound:
                parts.append(head.id)
                found.add(tuple(reversed(parts)))
        for node in self.nodes_of(*_NAMED):  # arg, keyword, def, class, except, match captures, type parameters
            for field_name in _NAMED[type(node)]:
                value = getattr(node, field_name)
                words.update([value] if isinstance(value, str) else value or ())
        for node in self.nodes_of(ast.alias):
            found.update(_spellings(node.name, bound))
            words.add(node.asname)
        for node in self.nodes_of(ast.ImportFrom):
            found.update(_spellings(node.module or "", bound))
        found.update((word,) for word in words if word in bound)
        return found

    # ---- tracers and truth tests (predicates.py) -----------------------------------------------------------------

    def may_be_tracer(self, expr: ast.expr) -> bool:
        """Over-approximates PredicateAnalysis.tracer: a call that may resolve into an array namespace
        (`jnp.sum(x)`, not `jnp.shape(x)`), an array method of a possible tracer (`x.sum()`, `x.at[i].set(v)`),
        arithmetic or a comparison with one, an index into one, `.T`/`.real`/`.imag` of one, or a name that a
        binding in its function (or the functions around it, for a closure) may make a tracer."""
        return self._may_be_tracer(expr, self._scope_of(expr))

    def may_fail_truth(self, expr: ast.expr, strict: bool = False) -> bool:
        """Over-approximates `PredicateAnalysis.test(expr) is not Truth.OTHER`: whether Python's truth test of
        `expr` may raise TracerBoolConversionError (`and`/`or` by their first operand, which Python tests first;
        a bare name, attribute or index also needs `_may_hold_array_value`). `strict`: a parameter without a default
        may be a tracer only in a function of `_Traced.param_seeds`, no
        name in a function nothing traces, `n op= v` by its `v` (`strict_tracer_limits`, end of this module), and
        a parameter only where `may_be_traced_param` allows."""
        if isinstance(expr, ast.BoolOp):
            return self.may_fail_truth(expr.values[0], strict)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return self.may_fail_truth(expr.operand, strict)
        scope = self._scope_of(expr)
        if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
            return self._may_be_tracer(expr, scope, None, strict) and self._may_hold_array_value(expr, scope, None, strict)
        return self._may_be_tracer(expr, scope, None, strict)

    def _scope_of(self, expr: ast.expr) -> "_Scope | None":
        function = self.function_of.get(id(expr))
        return self._scopes.get(id(function)) if function is not None else None

    @cached_property
    def function_of(self) -> dict[int, ast.AST]:
        """id() of each node inside a function: its innermost function (`_Index.owners`)."""
        index = self._index
        return {id(node): owner for node, owner in zip(index.nodes, index.owners) if owner is not None}

    @cached_property
    def _scopes(self) -> dict[int, "_Scope"]:
        """Per function (def or lambda): its bindings, as PredicateAnalysis reads them. A node belongs to the
        function whose body holds it (`_Index.scopes`): decorators, defaults and annotations to the one around."""
        index = self._index
        scopes: dict[int, _Scope] = {}
        for position in sorted(self._positions(_FUNCTIONS)):  # `nodes`' order: an outer function first
            outer = index.scopes[position]
            node = index.nodes[position]
            scopes[id(node)] = self._function_scope(node, scopes[id(outer)] if outer is not None else None)
        for position in self._positions(_SCOPE_BINDINGS):
            function = index.scopes[position]
            if function is not None:
                self._add_binding(index.nodes[position], scopes[id(function)])
        for position, names in self._array_uses():
            function = index.scopes[position]
            if function is not None:
                scopes[id(function)].evidence.update(names)
        for scope in scopes.values():  # a use inside a nested function is evidence for the outer binding too
            outer = scope.parent
            while outer is not None:
                outer.evidence |= scope.evidence
                outer = outer.parent
        return scopes

    def _function_scope(self, node: ast.AST, parent: "_Scope | None") -> "_Scope":
        """A function's scope with its parameters: those without a default may be tracers, those with an
        annotation that may say array (`_may_annotate_array`) may hold arrays."""
        inner = _Scope(parent=parent, function=node)
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        first_default = len(positional) - len(arguments.defaults)
        for index, argument in enumerate(positional):
            inner.bound.add(argument.arg)
            if index < first_default:
                inner.tracers.add(argument.arg)
                inner.params.add(argument.arg)
        for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
            inner.bound.add(argument.arg)
            if default is None:
                inner.tracers.add(argument.arg)
                inner.params.add(argument.arg)
        for argument in (*positional, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
            if argument is not None:
                inner.bound.add(argument.arg)
                if argument.annotation is not None and _may_annotate_array(self, argument.annotation):
                    inner.arrays.add(argument.arg)
        return inner

    @staticmethod
    def _add_binding(node: ast.AST, scope: "_Scope") -> None:
        """The names one node of `_SCOPE_BINDINGS` binds in its function, and how."""
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name, value in _bound_values(target, node.value):
                    scope.bound.add(name)
                    scope.arrays.add(name)
                    scope.values.append((name, value))
        elif isinstance(node, (ast.AugAssign, ast.NamedExpr)):
            if isinstance(node.target, ast.Name):
                scope.bound.add(node.target.id)
                scope.tracers.add(node.target.id)
                scope.arrays.add(node.target.id)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):  # bound elsewhere: anything goes
            scope.bound.update(node.names)
            scope.tracers.update(node.names)
            scope.arrays.update(node.names)
        else:
            for name in _statement_binds(node):
                scope.bound.add(name)

    def _array_uses(self) -> Iterator[tuple[int, list[str]]]:
        """(position in `nodes`, names) of the uses that PredicateAnalysis takes as evidence of arrays: `x.shape`,
        `x.at`, ... and the names passed to a call that may resolve into jax.numpy, but not to one that takes
        sequences too (`jnp.array(x)`, `jnp.stack(x)`: dataflow's `_ACCEPTS_SEQUENCES`)."""
        nodes = self._index.nodes
        for position in self._positions((ast.Attribute,)):
            node = nodes[position]
            if node.attr in _ARRAY_EVIDENCE and isinstance(node.value, ast.Name):
                yield position, [node.value.id]
        for position in self._positions((ast.Call,)):
            func = nodes[position].func
            if self._may_be_imported(func) and any(
                q.startswith("jax.numpy.") and q not in _ACCEPTS_SEQUENCES for q in self.qualified_names(dotted(func))
            ):
                yield position, [arg.id for arg in nodes[position].args if isinstance(arg, ast.Name)]

    def _tracer_names(self, scope: "_Scope", strict: bool = False) -> frozenset[str]:
        solved = scope.solved_strict if strict else scope.solved
        if solved is None:
            names = set(scope.tracers)
            if strict and not isinstance(scope.function, ast.Lambda) and id(scope.function) not in self._traced.param_seeds:
                names -= scope.params
            augmented: list[tuple[str, ast.expr]] = []
            if strict:
                limits = strict_tracer_limits(self, scope)  # end of this module
                if limits is None:
                    scope.solved_strict = frozenset()
                    return scope.solved_strict
                removed, augmented = limits
                names -= removed
                # PredicateAnalysis._param_tracer: TracedAnalysis gives the parameter the kind TRACED. Asked last,
                # of the parameters still in: its answer is the module's kind solution (`_evaluator`, a walk of
                # the whole module), which a function nothing traces, or one without such parameters, never needs.
                names -= {p for p in scope.params & names if not may_be_traced_param(self, scope.function, p)}
            changed = True
            while changed:
                changed = False
                for name, value in (*scope.values, *augmented):
                    if name not in names and value is not None and self._may_be_tracer(value, scope, names, strict):
                        names.add(name)
                        changed = True
            solved = frozenset(names)
            if strict:
                scope.solved_strict = solved
            else:
                scope.solved = solved
        return solved

    def _name_may_be_tracer(
        self, name: str, scope: "_Scope | None", local: set[str] | None = None, strict: bool = False
    ) -> bool:
        """Through the scope that binds `name`: the function itself, or one around it (module names never)."""
        while scope is not None:
            if name in scope.bound:
                names = local if local is not None else self._tracer_names(scope, strict)
                return name in names
            scope, local = scope.parent, None
        return False

    def _may_be_tracer(
        self, expr: ast.expr, scope: "_Scope | None", local: set[str] | None = None, strict: bool = False
    ) -> bool:
        may = lambda e: self._may_be_tracer(e, scope, local, strict)  # noqa: E731
        if isinstance(expr, ast.Name):
            return self._name_may_be_tracer(expr.id, scope, local, strict) and (
                local is not None or not strict or self._may_reach_as_tracer(expr, scope)
            )
        if isinstance(expr, ast.Call):
            parts = dotted(expr.func)
            qualified = list(self.qualified_names(parts)) if parts is not None else []
            if any(q.startswith(ARRAY_NAMESPACES) and q not in STATIC_CALLS for q in qualified):
                if not strict or any(_one_array(q, expr) for q in qualified):
                    return True
            func = expr.func
            if isinstance(func, ast.Attribute):
                receiver = func.value
                if isinstance(receiver, ast.Subscript) and isinstance(receiver.value, ast.Attribute):
                    if receiver.value.attr == "at" and may(receiver.value.value):
                        return True
                # TracedAnalysis joins a method's receiver and arguments (`s.sum(x)` is traced with `x`)
                return func.attr in ARRAY_METHODS and (
                    may(receiver) or any(may(a.value if isinstance(a, ast.Starred) else a) for a in expr.args)
                    or any(may(k.value) for k in expr.keywords)
                )
            return False
        if isinstance(expr, ast.BinOp):
            return may(expr.left) or may(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return not isinstance(expr.op, ast.Not) and may(expr.operand)
        if isinstance(expr, ast.Compare):
            return self._may_compare(expr, scope, local, strict)
        if isinstance(expr, ast.Subscript):
            return may(expr.value)
        if isinstance(expr, ast.Attribute):
            return expr.attr in ("T", "mT", "real", "imag") and may(expr.value)
        if isinstance(expr, ast.NamedExpr):
            return may(expr.value)
        return False

    def _may_reach_as_tracer(self, name: ast.Name, scope: "_Scope | None") -> bool:
        """Over-approximates PredicateAnalysis._name_tracer of a name read in its function's own statements, which
        asks every binding that reaches the read (FunctionFlow.reaching) to be a tracer: some binding that may
        reach it (`ast_flow.StatementOrder`) may make one, an assignment by its value, any other binding as
        `_tracer_names` says. flax's `merge` tests `graph_state._graphdef != graphdef` after `graphdef =
        graphdef_or_graphstate._graphdef`; the `graphdef = graphdef_or_graphstate` of the `elif` cannot reach it."""
        function = scope.function if scope is not None else None
        if type(function) not in (ast.FunctionDef, ast.AsyncFunctionDef) or name.id not in scope.bound:
            return True
        cache = self.__dict__.setdefault("_statement_orders", {})
        order = cache.get(id(function))
        if order is None:
            order = cache[id(function)] = ast_flow.StatementOrder(function)
        use = order.statement_of(name)
        bindings = order.bindings(name.id)
        if use is None or isinstance(use, _DEFS) or not bindings:
            return True  # a decorator's or default's name: PredicateAnalysis reads it from another function
        names = self._tracer_names(scope, True)
        for statement, assigned in bindings:
            if not order.may_reach(statement, use):
                continue
            if not assigned:
                return True
            targets = statement.targets if type(statement) is ast.Assign else [statement.target]
            for target in targets:
                for bound, value in _bound_values(target, statement.value):
                    if bound == name.id and value is not None and self._may_be_tracer(value, scope, names, True):
                        return True
        return False

    def _may_hold_array_value(
        self, expr: ast.expr, scope: "_Scope | None", local: set[str] | None = None, strict: bool = False
    ) -> bool:
        while isinstance(expr, (ast.Subscript, ast.Attribute)):
            if isinstance(expr, ast.Attribute) and expr.attr not in ("T", "mT", "real", "imag"):
                return False
            expr = expr.value
        if isinstance(expr, ast.Name):
            while scope is not None:
                if expr.id in scope.bound:
                    return expr.id in scope.arrays or expr.id in scope.evidence
                scope = scope.parent
            return False
        return self._may_be_tracer(expr, scope, local, strict)

    def _may_compare(
        self, expr: ast.Compare, scope: "_Scope | None", local: set[str] | None, strict: bool = False
    ) -> bool:
        """Over-approximates PredicateAnalysis's traced comparison: `<`, `>`, `==`, ... with no None or string
        operand and an operand that may be a tracer; `==`/`!=` without a number need an array."""
        comparisons = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
        operands = [expr.left, *expr.comparators]
        if not all(isinstance(op, comparisons) for op in expr.ops):
            return False
        if any(isinstance(o, ast.Constant) and (o.value is None or isinstance(o.value, (str, bytes))) for o in operands):
            return False
        traced = [o for o in operands if self._may_be_tracer(o, scope, local, strict)]
        if not traced:
            return False
        if all(isinstance(op, (ast.Eq, ast.NotEq)) for op in expr.ops):
            numbers = any(_is_number(o) for o in operands)
            return numbers or any(self._may_hold_array_value(o, scope, local, strict) for o in traced)
        return True

    # ---- calls -------------------------------------------------------------------------------------------------

    @cached_property
    def may_trace(self) -> bool:
        """Whether anything in the module may name a JAX transformation or a lax body-taking function
        (`jax.jit`, `eqx.filter_vmap`, `lax.scan`, ...): without one, TracedAnalysis finds no traced function."""
        return bool(self.project_seeds) or not _TRACING.isdisjoint(self.spelled_names)

    @cached_property
    def spelled_names(self) -> frozenset[str]:
        """Every imported name that some spelling of `names()` may stand for (`qualified_names` of each distinct
        one): what `may_trace` and the deprecated-API screens look up."""
        return frozenset(q for parts in self.names() for q in self.qualified_names(parts))

    def in_traced_code(self, *types: type[ast.AST]) -> Iterator[ast.AST]:
        """The nodes of these types whose innermost enclosing function (def, async def or lambda; the node may be
        in its body, decorators, defaults or annotations) TracedAnalysis may find traced. A superset: functions
        are matched by name instead of scope, and every transformation or lax call seeds every function or
        lambda that its arguments mention."""
        functions = self._traced.functions
        index = self._index
        for position in self._positions(types):
            owner = index.owners[position]
            if owner is not None and id(owner) in functions:
                yield index.nodes[position]

    @cached_property
    def traced_fact(self) -> Traced:
        """The traced fact of the module (jaxfix/facts/traced.py), exact: what the kind screens below ask, and what
        TracedAnalysis answers the rules from (one per module)."""
        return Traced(self.tree, self.binder, project=self.project)

    @cached_property
    def _traced(self) -> _Traced:
        """TracedAnalysis seeds the functions decorated with a transformation (`@jax.jit`, `@partial(jax.jit, ...)`)
        and those named or written as arguments of a transformation or lax call (`jax.vmap(f)`, `lax.scan(step,
        ...)`), then traces the functions that a traced one calls by name, and those nested in it."""
        result = _Traced()
        index = self._index
        defs: dict[str, list[ast.AST]] = {}
        called: dict[int, set[str]] = {}  # function: the names it calls (`f(...)`), outside functions nested in it
        nested: dict[int, list[ast.AST]] = {}  # function: the functions directly inside it
        seeds: list[ast.AST] = []
        named: set[str] = set()  # names mentioned in the arguments of transformations and lax calls
        for position in self._positions(_FUNCTIONS):
            node, function = index.nodes[position], index.owners[position]
            if function is not None:
                nested.setdefault(id(function), []).append(node)
            if not isinstance(node, ast.Lambda):
                defs.setdefault(node.name, []).append(node)
                if any(self._mentions(d, TRANSFORMS) for d in node.decorator_list):
                    seeds.append(node)
        imports = self.imports
        for position in self._positions((ast.Call,)):
            node, function = index.nodes[position], index.owners[position]
            head = node.func
            while type(head) is ast.Attribute:
                head = head.value
            if type(head) is not ast.Name:
                continue
            if function is not None and head is node.func:
                called.setdefault(id(function), set()).add(head.id)
            # `may_resolve_to` only where the head is bound by an import: most calls are `self.f()` or `x.sum()`
            if head.id in imports and self.may_resolve_to(node.func, _TRACING):
                for argument in (*node.args, *(k.value for k in node.keywords)):
                    for inner in ast.walk(argument):
                        if isinstance(inner, ast.Lambda):
                            seeds.append(inner)
                        elif isinstance(inner, ast.Name):
                            named.add(inner.id)
        seeds.extend(f for name in named for f in defs.get(name, ()))
        seeds.extend(self.project_seeds)
        # PredicateAnalysis proves a parameter a tracer only where a transformation or lax call seeds its
        # function, or where traced code calls the function by its name.
        result.param_seeds.update(id(f) for f in seeds)
        while seeds:
            function = seeds.pop()
            if id(function) not in result.functions:
                result.functions.add(id(function))
                seeds.extend(nested.get(id(function), ()))
                seeds.extend(f for name in called.get(id(function), ()) for f in defs.get(name, ()))
        result.param_seeds.update(
            id(f) for function in result.functions for name in called.get(function, ()) for f in defs.get(name, ())
        )
        return result

    def _mentions(self, expr: ast.AST, names) -> bool:
        """Whether a name or dotted name anywhere inside `expr` may refer to one of `names`. A dotted name (most
        decorators: `@property`, `@nn.compact`, `@jax.jit`) is read prefix by prefix without a walk."""
        while type(expr) is ast.Attribute:
            if self.may_resolve_to(expr, names):
                return True
            expr = expr.value
        if type(expr) is ast.Name:
            return self.may_resolve_to(expr, names)
        return any(isinstance(n, (ast.Name, ast.Attribute)) and self.may_resolve_to(n, names) for n in ast.walk(expr))


# Fields that hold only identifiers, numbers or flags in every node type that has them (`name` does not qualify:
# a `type` alias's name is a Name node).
# Fields that never hold a node, and `ctx` (Load, Store, Del: shared instances no screen asks about; a third of all
# nodes, left out of the index: 0.73 s -> 0.46 s for the 782 real files).
_LEAF_FIELDS = frozenset({"id", "attr", "arg", "module", "level", "asname", "type_comment", "is_async", "conversion", "ctx"})


def _child_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes (a constant's value never does)."""
    return () if kind is ast.Constant else tuple(name for name in kind._fields if name not in _LEAF_FIELDS)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def ast_children(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes(node)` but the expression contexts (in which nothing is ever found), in its order:
    the fields of each node type read once, not looked over at every node."""
    kind = type(node)
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = _child_fields(kind)
    found = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            found.append(value)
        elif isinstance(value, list):
            found.extend(item for item in value if isinstance(item, ast.AST))
    return found


def traced_nodes(screen: Screen, *types: type[ast.AST]) -> Iterator[ast.AST]:
    """`screen.in_traced_code(*types)`, or every node of these types for a screen without that query."""
    in_traced_code = getattr(screen, "in_traced_code", None)
    if in_traced_code is not None:
        return in_traced_code(*types)
    return (node for node in ast.walk(screen.tree) if isinstance(node, types))




_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_WITH_BLOCKS = frozenset(  # the statement types `statement_blocks` finds blocks in: compound statements
    kind for kind in vars(ast).values()
    if isinstance(kind, type) and issubclass(kind, ast.stmt) and _BLOCK_FIELDS & set(kind._fields)
)


def statement_blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists directly inside a statement: bodies, `else`, `finally`, handlers, match cases."""
    for field_name in ("body", "orelse", "finalbody"):
        block = getattr(statement, field_name, None)
        if isinstance(block, list):
            yield block
    for inner in getattr(statement, "handlers", ()):
        yield inner.body
    for case in getattr(statement, "cases", ()):
        yield case.body


def _bound_values(target: ast.AST, value: ast.expr | None) -> Iterator[tuple[str, ast.expr | None]]:
    """(name, the value it gets, if one expression) for each name an assignment target binds. A name unpacked from
    something else than a literal of the same length gets the whole value: `x, y = carry` makes `x` a tracer
    where `carry` is one (a fuzzed `fori_loop` body's `if x > 0:` was hidden from JF201 while it got nothing)."""
    if isinstance(target, ast.Name):
        yield target.id, value
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
        for index, element in enumerate(target.elts):
            yield from _bound_values(element, values[index] if values is not None else value)
    elif isinstance(target, ast.Starred):
        yield from _bound_values(target.value, value)


def _statement_binds(node: ast.AST) -> Iterator[str]:
    """Names a `for`, `with`, `except`, import or class statement binds in its function."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        yield from ast_target_names(node.target)
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            yield from ast_target_names(item.optional_vars)
    elif isinstance(node, ast.ExceptHandler):
        if node.name:
            yield node.name
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
    elif isinstance(node, ast.ClassDef):
        yield node.name


def _spellings(name: str, bound) -> Iterator[tuple[str, ...]]:
    """A dotted name of an import statement: each dotted prefix and each part alone, where import-bound."""
    parts = tuple(name.split(".")) if name and name != "*" else ()
    for end in range(1, len(parts) + 1):
        if parts[0] in bound:
            yield parts[:end]
        if parts[end - 1] in bound:
            yield (parts[end - 1],)


def _one_array(qualified: str, call: ast.Call) -> bool:
    """PredicateAnalysis's calls that return one array: in an array namespace, not a static or shape query, not
    a tuple, list or pytree (`jnp.shape`, `jnp.size`, `jax.random.split`); `jnp.where(t, a, b)` yes."""
    if qualified == "jax.numpy.where" and len(call.args) + len(call.keywords) == 3:
        return True
    return (
        qualified.startswith(ARRAY_NAMESPACES)
        and not qualified.startswith(predicates._NOT_ONE_ARRAY_PREFIXES)
        and qualified not in STATIC_CALLS
        and qualified not in predicates._NOT_ONE_ARRAY
    )


def _is_number(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float, complex))
    return isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)) and _is_number(expr.operand)


# ---- facts of the rules' screens, computed once per module ---------------------------------------------------


def once_per_screen(fact):
    """`fact(screen)` computed on first use and kept on the Screen, as its cached properties are."""
    key = f"_fact_{fact.__name__}"

    @wraps(fact)
    def remembered(screen: Screen):
        try:
            return screen.__dict__[key]
        except KeyError:
            found = screen.__dict__[key] = fact(screen)
            return found

    return remembered


# ---- JF101, JF102: loops that may carry a name from one step to the next ------------------------------------------

_DYNAMIC_SCOPE = frozenset({"locals", "vars", "eval", "exec", "dir"})  # dataflow's _OPAQUE_CALLS


def _reads(screen: Screen, function: ast.AST) -> frozenset[str] | None:
    """The names `function` (nested functions included) may read: loaded names, `op=` targets, `global` and
    `nonlocal` names; None where it calls `locals`, `vars`, `eval`, `exec` or `dir` (any name may be read)."""
    cache = screen.__dict__.setdefault("_function_reads", {})
    found = cache.get(id(function), ())
    if found == ():
        names: set[str] = set()
        for node in ast.walk(function):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    if node.id in _DYNAMIC_SCOPE:
                        names = None
                        break
                    names.add(node.id)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
        found = cache[id(function)] = None if names is None else frozenset(names)
    return found


def may_carry(screen: Screen, loop: ast.For | ast.While) -> bool:
    """Over-approximates `LoopFlow.carried` being non-empty (dataflow.loop_flow: names the body writes or deletes,
    the loop's own targets aside, that are live at the head of an iteration or after the loop): a name the body
    binds or deletes (nested code included) that the enclosing function reads anywhere (`_reads`)."""
    return _carry_candidates(screen, loop) != frozenset()


def _carry_candidates(screen: Screen, loop: ast.For | ast.While) -> frozenset[str] | None:
    """`may_carry`'s names; None at module level (nothing here to decide it: not traced code anyway)."""
    function = screen.function_of.get(id(loop))
    if function is None:
        return None
    reads = _reads(screen, function)
    targets = set(ast_target_names(loop.target)) if isinstance(loop, (ast.For, ast.AsyncFor)) else set()
    found: set[str] = set()
    for statement in loop.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                bound = (node.id,)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound = (node.name,)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound = tuple((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound = (node.name,)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                bound = (node.name,)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                bound = (node.rest,)
            else:
                continue
            found.update(name for name in bound if name not in targets and (reads is None or name in reads))
    if found and reads is not None:
        live = _loop_liveness(screen, function).get(id(loop))
        if live is not None:
            found &= live
    return frozenset(found)


def _loop_liveness(screen: Screen, function: ast.AST) -> dict[int, frozenset[str]]:
    """`ast_flow.loop_liveness` of `function`, once per screen."""
    cache = screen.__dict__.setdefault("_loop_liveness", {})
    found = cache.get(id(function))
    if found is None:
        found = cache[id(function)] = ast_flow.loop_liveness(function)
    return found


# ---- JF101: carried names and index uses that surely stop a lax loop ----------------------------------------------

_JUMPS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_NESTED_SCOPES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
    ast.GeneratorExp,
)  # fmt: skip
_READ_FIRST = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)  # their value runs before any binding


def binding_count(node: ast.AST, name: str) -> int:
    """How many times `node` (nested scopes included) binds or declares `name`."""
    return sum(node_binds(inner, name) for inner in ast.walk(node))


def node_binds(node: ast.AST, name: str) -> int:
    """How many times `node` itself (not the nodes inside it) binds or declares `name`: a store, a parameter, an
    import, a def or class, `except ... as`, a match capture, `global`/`nonlocal`."""
    kind = type(node)
    if kind is ast.Name:
        return node.id == name and type(node.ctx) is not ast.Load
    if kind is ast.arg:
        return node.arg == name
    if kind in (ast.Import, ast.ImportFrom):
        return sum((alias.asname or alias.name).split(".")[0] == name for alias in node.names)
    if kind in (ast.Global, ast.Nonlocal):
        return name in node.names
    if kind is ast.MatchMapping:
        return node.rest == name
    if isinstance(node, (*_DEFS, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return node.name == name
    return 0


def _reads_outside_scopes(expr: ast.AST, name: str) -> bool:
    """Whether `expr` loads `name` where it runs, not in a lambda, def or comprehension of its own."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) is ast.Name and node.id == name and type(node.ctx) is ast.Load:
            return True
        if not isinstance(node, _NESTED_SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _surely_live(statements: Sequence[ast.stmt], name: str) -> bool:
    """Under-approximates Dataflow's liveness of `name` where `statements` start: a simple statement reads it in
    its value, after statements that neither bind it nor jump (`return`, `raise`, `break`, `continue`)."""
    for statement in statements:
        value = statement.value if isinstance(statement, _READ_FIRST) else None
        if value is not None and not binding_count(value, name) and _reads_outside_scopes(value, name):
            return True
        if binding_count(statement, name) or any(isinstance(node, _JUMPS) for node in ast.walk(statement)):
            return False
    return False


def _block_around(function: ast.AST, statement: ast.stmt) -> tuple[list[ast.stmt], int] | None:
    """The statement list of `function` (its compound statements' blocks included, not nested defs or classes)
    that holds `statement`, and its position there."""
    stack = [function.body]
    while stack:
        block = stack.pop()
        for position, inner in enumerate(block):
            if inner is statement:
                return block, position
            if not isinstance(inner, _DEFS):
                stack.extend(statement_blocks(inner))
    return None


def surely_undefined_carry(screen: Screen, loop: ast.For | ast.While) -> bool:
    """Under-approximates `LoopFlow.undefined` being non-empty (CarryAnalysis.blocker: "carried from one step to
    the next but not defined before the loop"): a name a top-level assignment of the body binds, surely live after
    the loop (`_surely_live` over the statements after it), that nothing else in the function binds but those
    statements (no parameter either): every path reaches the loop for the first time without a binding of it (a
    power iteration's `v` in `for _ in range(n): v = f(u); u = g(v)`, read after the loop)."""
    function = screen.function_of.get(id(loop))
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    found = _block_around(function, loop)
    if found is None:
        return False
    block, position = found
    after = block[position + 1 :]
    return any(
        _surely_live(after, name)
        and sum(binding_count(node, name) for node in (function.args, *function.body))
        == sum(binding_count(statement, name) for statement in (*loop.body, *after))
        for name in _assigned_in_body(loop)
    )


def surely_carries(screen: Screen, loop: ast.For | ast.While) -> bool:
    """Under-approximates `LoopFlow.carried` being non-empty: a name a top-level assignment of the body binds (not
    a loop target), which the body reads before binding it (`_surely_live` over the body), so that it flows from
    one step to the next (an RNN's `carry, y = cell(carry, x[t])`)."""
    return any(_surely_live(loop.body, name) for name in _assigned_in_body(loop))


def _assigned_in_body(loop: ast.For | ast.While) -> set[str]:
    """The names a top-level assignment of the loop's body binds, its targets aside: each is in `LoopFlow.modified`."""
    loop_targets = set(ast_target_names(loop.target)) if isinstance(loop, ast.For) else set()
    return {
        name for statement in loop.body if type(statement) is ast.Assign
        for target in statement.targets for name in ast_target_names(target)
    } - loop_targets  # fmt: skip


def surely_reshaped_carry(screen: Screen, loop: ast.For) -> bool:
    """Under-approximates CarryAnalysis.blocker's "may change shape from one step to the next": a top-level
    `y = y.reshape(...)` in the body (a method of `shapes.RESHAPING_METHODS`, or `y.T`), where `y` is carried
    because the body reads it before binding it (`_surely_live` over the body)."""
    loop_targets = set(ast_target_names(loop.target))
    for statement in loop.body:
        if type(statement) is not ast.Assign:
            continue
        value = statement.value
        if type(value) is ast.Call:
            reshaped, methods = value.func, shapes.RESHAPING_METHODS
        else:
            reshaped, methods = value, ("T", "mT")
        if not (type(reshaped) is ast.Attribute and type(reshaped.value) is ast.Name and reshaped.attr in methods):
            continue
        name = reshaped.value.id
        if (
            name not in loop_targets
            and any(type(target) is ast.Name and target.id == name for target in statement.targets)
            and _surely_live(loop.body, name)
        ):
            return True
    return False


_IDENTITY_TESTS = (ast.In, ast.NotIn, ast.Is, ast.IsNot)
_ARRAY_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})  # the attributes Dataflow.is_array_like follows
_NEVER_ARRAYS = (
    ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.JoinedStr,
)  # fmt: skip


def surely_concrete_index(
    screen: Screen, loop: ast.For, not_array: Callable[[ast.expr], bool] | None = None
) -> bool:
    """Under-approximates `Dataflow.concrete_use(loop, [index])` finding a use that needs the loop index as a
    Python int: the index, or it plus or minus number literals, as a slice bound, an index into an attribute
    (`state.entities[i, :]`: is_array_like takes no attribute but `.T` for an array), an argument of a call not
    through an import (`block(x, i)`, `range(i)`), a truth value, a membership or identity test, an f-string, a
    string's `%` or `n ** i`. Each is decided by the use alone, whatever the names in it hold, but for an index
    into a base that `not_array` (if given) says `is_array_like` rejects (a name that cannot hold an array)."""
    if type(loop.target) is not ast.Name:
        return False
    index = loop.target.id
    parents: dict[int, ast.AST] = {}
    uses = []
    for statement in loop.body:
        for node in ast.walk(statement):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
            if type(node) is ast.Name and node.id == index and type(node.ctx) is ast.Load:
                uses.append(node)
    return any(_needs_python_int(screen, use, parents, not_array) for use in uses)


def _needs_python_int(
    screen: Screen, use: ast.Name, parents: dict[int, ast.AST], not_array: Callable[[ast.expr], bool] | None = None
) -> bool:
    """`Dataflow._climb` from one use of the index, where its outcome does not depend on kinds or arrays."""
    child = use
    while True:
        parent = parents.get(id(child))
        if type(parent) is ast.BinOp:
            other = parent.left if parent.right is child else parent.right
            number = type(other) is ast.Constant and type(other.value) in (int, float)
            if type(other) is ast.Constant and type(other.value) is str:
                return True  # string formatting
            if type(parent.op) is ast.Pow and parent.right is child:
                return number and type(other.value) is int  # `2 ** i` overflows int32
            if not number:
                return False
        elif type(parent) is ast.UnaryOp:
            if type(parent.op) is ast.Not:
                return True
        else:
            break
        child = parent
    kind = type(parent)
    if kind is ast.Slice or kind is ast.BoolOp or kind is ast.Assert or kind is ast.FormattedValue:
        return True
    if kind in (ast.If, ast.While, ast.IfExp):
        return parent.test is child
    if kind is ast.keyword and type(parents.get(id(parent))) is ast.Call:
        child, parent = parent, parents[id(parent)]
        kind = ast.Call
    if kind is ast.Call and parent.func is not child:
        # an argument: `_accepts_traced` knows only calls of JAX functions, each through an import
        return not screen._may_be_imported(parent.func)
    if kind is ast.Compare:
        if parent.left is child:
            return any(type(op) in _IDENTITY_TESTS for op in parent.ops)
        return any(type(op) in _IDENTITY_TESTS and c is child for op, c in zip(parent.ops, parent.comparators))
    if kind is ast.Tuple and type(parents.get(id(parent))) is ast.Subscript:
        child, parent = parent, parents[id(parent)]
    if type(parent) is ast.Subscript and parent.slice is child:
        base = parent.value
        if type(base) is ast.Attribute and base.attr == "at":
            base = base.value
        return _surely_not_array_like(base) or (not_array is not None and not_array(base))
    return False


def _surely_not_array_like(expr: ast.expr) -> bool:
    """Whether `Dataflow.is_array_like` says no whatever the names in `expr` hold: an attribute (but `.T` of an
    array), a literal container or string, or arithmetic of such."""
    kind = type(expr)
    if kind is ast.Attribute:
        return expr.attr not in _ARRAY_ATTRIBUTES or _surely_not_array_like(expr.value)
    if kind is ast.Subscript:
        return _surely_not_array_like(expr.value)
    if kind is ast.BinOp:
        return _surely_not_array_like(expr.left) and _surely_not_array_like(expr.right)
    if kind is ast.Constant:
        return expr.value is not None and type(expr.value) is not bool
    return isinstance(expr, _NEVER_ARRAYS)


# ---- positions as LibCST gives them: `jaxfix.facts.positions`, one per screen ------------------------------------


# ---- JF101, JF102, JF103, JF601: the kinds TracedAnalysis gives expressions, and compiled functions ------------
#
# Asked of the exact fact (jaxfix/facts/traced.py, `Screen.traced_fact`), which TracedAnalysis answers the rules
# from: the same fact, asked before LibCST parses the file.


def _is_traced(screen: Screen, function: ast.AST | None) -> bool:
    """`TracedAnalysis.is_traced(function)`, exact; the fact is built only for a function that `Screen._traced`, a
    superset found by name without solving anything, may trace."""
    return function is not None and id(function) in screen._traced.functions and screen.traced_fact.is_traced(function)


def may_kind(screen: Screen, expr: ast.expr) -> tuple[bool, bool]:
    """`(t, s)`: whether TracedAnalysis's kind of `expr`, where it stands, is TRACED, and whether it is STATIC
    (neither: UNKNOWN), asked of the exact fact (`Screen.traced_fact`)."""
    kind = screen.traced_fact.kind(expr)
    return kind is Kind.TRACED, kind is Kind.STATIC


# ---- which parameters TracedAnalysis may give the kind TRACED ---------------------------------------------------


def may_be_traced_param(screen: Screen, function: ast.AST, name: str) -> bool:
    """`TracedAnalysis.param_kind(function, name) is Kind.TRACED`, asked of the exact fact."""
    return _is_traced(screen, function) and screen.traced_fact.param_kind(function, name) is Kind.TRACED


# ---- strict tracers: functions nothing traces, and what `op=` makes a tracer ---------------------------------------
#
# PredicateAnalysis proves a parameter a tracer only where TracedAnalysis gives it Kind.TRACED (`_param_tracer`),
# which Screen's strict tracers ask of the exact fact (`may_be_traced_param`); and nothing is a tracer in a function
# TracedAnalysis does not trace (`_tracer` asks `in_traced_code` first; a closure's binding is judged where it is
# bound).


def strict_tracer_limits(screen: Screen, scope: "_Scope") -> tuple[frozenset[str], list[tuple[str, ast.expr]]] | None:
    """For Screen's strict tracers: None where no name of `scope` may be a tracer (TracedAnalysis does not trace
    its function); else the names to take out of the scope's seeds (the names only `op=` puts there; its parameters
    that are never tracers go by `may_be_traced_param`) and each `name op= value` of the function, which
    makes `name` a tracer where `value` may be one (PredicateAnalysis: an augmented assignment is a tracer where
    its value is one or every binding reaching it is)."""
    function = scope.function
    if id(function) not in screen._traced.functions:  # a superset: the exact fact is asked later, if at all
        return None
    augmented, only = _augmented(screen).get(id(function), ([], frozenset()))
    return only - scope.params, augmented


@once_per_screen
def _augmented(screen: Screen) -> dict[int, tuple[list[tuple[str, ast.expr]], frozenset[str]]]:
    """id() of a function → (name, value) of each `name op= value` in it (as Screen._scopes assigns them: nested
    defs and lambdas aside), and the names among them that no `:=`, `global` or `nonlocal` anywhere binds."""
    found: dict[int, tuple[list, set]] = {}
    others: set[str] = set()
    function_of = screen.function_of
    for node in screen.nodes_of(ast.AugAssign):
        function = function_of.get(id(node))
        if function is not None and type(node.target) is ast.Name:
            values, targets = found.setdefault(id(function), ([], set()))
            values.append((node.target.id, node.value))
            targets.add(node.target.id)
    for node in screen.nodes_of(ast.NamedExpr, ast.Global, ast.Nonlocal):
        if type(node) is ast.NamedExpr:
            if type(node.target) is ast.Name:
                others.add(node.target.id)
        else:
            others.update(node.names)
    return {key: (values, frozenset(targets - others)) for key, (values, targets) in found.items()}


# ---- traced functions, with the names that seed or call them resolved through the functions around their use ------


def in_scoped_traced_function(screen: Screen, node: ast.AST) -> bool:
    """Whether TracedAnalysis traces the innermost function around `node` (True for a screen without the query)."""
    if not hasattr(screen, "in_traced_code"):
        return True
    return _is_traced(screen, screen.function_of.get(id(node)))


# ---- array evidence from annotations (PredicateAnalysis.array_evidence) -------------------------------------------


_ANNOTATED_ARRAYS = BARE_ARRAY_ANNOTATION_NAMES  # predicates._annotated_array's last parts (a superset for attributes)
_ARRAY_ANNOTATIONS = ARRAY_ANNOTATIONS | TRACED_ARRAY_ANNOTATIONS  # ArrayAnalysis._array_param's


def _may_annotate_array(screen: Screen, annotation: ast.expr) -> bool:
    """Whether a parameter's annotation may be evidence of an array for PredicateAnalysis.array_evidence: for
    predicates._annotated_array, a name or attribute whose last part is `_ANNOTATED_ARRAYS`, bare or first in a
    subscript that is no container (`Optional[jax.Array]`, `Float[Array, "n"]`); for ArrayAnalysis._array_param,
    one that may resolve to `_ARRAY_ANNOTATIONS`, bare, as a subscript's head (`npt.NDArray[np.float32]`) or
    first in a jaxtyping subscript. Dataflow's evidence skips parameters. Never a union (`bool | jax.Array`,
    flax's `RefMap | None`), a string, or another class (gemma's `cache: Cache | None`)."""
    if type(annotation) is ast.Subscript:
        head = annotation.value
        if screen.may_resolve_to(head, _ARRAY_ANNOTATIONS):
            return True
        first = annotation.slice
        if type(first) is ast.Tuple and first.elts:
            first = first.elts[0]
        if type(first) is ast.Starred:
            first = first.value
        parts = dotted(head)
        typed = parts is not None and any(q.startswith(jaxtyping.MODULE) for q in screen.qualified_names(parts))
        if typed and screen.may_resolve_to(first, _ARRAY_ANNOTATIONS):
            return True
        if _container_annotation(annotation):
            return False
        annotation = first
    if type(annotation) is ast.Attribute:
        return annotation.attr in _ANNOTATED_ARRAYS or screen.may_resolve_to(annotation, _ARRAY_ANNOTATIONS)
    return type(annotation) is ast.Name and (
        annotation.id in _ANNOTATED_ARRAYS or screen.may_resolve_to(annotation, _ARRAY_ANNOTATIONS)
    )


def _container_annotation(annotation: ast.expr) -> bool:
    """`Tuple[jax.Array, ...]`, `typing.List[...]`, ...: an annotation PredicateAnalysis never takes as evidence of
    an array (predicates._annotated_array rejects a container subscript; ArrayAnalysis, whose annotations are
    `jax.Array` and `jnp.ndarray` themselves, and dataflow's evidence, which skips parameters, read no subscript)."""
    if type(annotation) is not ast.Subscript:
        return False
    value = annotation.value
    last = value.attr if type(value) is ast.Attribute else value.id if type(value) is ast.Name else None
    return last in fact_predicates._CONTAINER_ANNOTATIONS
