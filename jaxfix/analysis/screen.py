"""Cheap facts about one module from Python's own `ast`, for the engine's screens (`Codemod.may_match_tree`).

Each LibCST metadata provider is a full traversal (about 0.3 s for 3000 lines, where `ast` parses the same file in
0.01 s), so before a codemod sees a module the engine asks it whether it can possibly find anything there. Each
fact here over-approximates one of `jaxfix.analysis` (it may say "may" for nothing, never "no" for something):
- names (names.py): imports anywhere in the module count everywhere, whatever scope, shadowing or
  `try`/`except ImportError` shim they sit in, and every import of a name counts;
- arrays (arrays.py): ArrayAnalysis's own rule (every binding of a name in its scope makes an array) on a subset
  of the bindings it sees, with names read in values matched by name instead of scope;
- traced code (traced.py): TracedAnalysis's seeds and propagation, with functions matched by name instead of
  scope and every name an argument of a transformation mentions taken as a function passed to it.
A screen built on these facts is sound as long as it says "no" only where they rule a finding out.

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
from typing import Iterable, Iterator, Sequence

from jaxfix.analysis import arrays, predicates
from jaxfix.analysis.dataflow import ARRAY_METHODS
from jaxfix.analysis.traced import _FILTERED, _GRAD_LIKE, _JIT_LIKE, _PARTIAL, _VMAP_LIKE, ARRAY_NAMESPACES, LAX_BODIES, STATIC_CALLS, TRANSFORMS

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
_ARRAY_CALLEES = arrays._FRESH_FUNCTIONS | arrays._VIEW_FUNCTIONS | arrays._RANDOM
_ARRAY_METHODS = arrays._FRESH_METHODS | arrays._VIEW_METHODS
_UNARY = (ast.USub, ast.UAdd, ast.Invert)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_TRIES = (ast.Try, ast.TryStar) if hasattr(ast, "TryStar") else (ast.Try,)
_PARTIALS = frozenset(_PARTIAL)


@dataclass
class _Arrays:
    groups: dict[tuple[int, str], tuple[ast.AST, str, list]] = field(default_factory=dict)  # (scope, name): bindings
    declared: dict[int, set[str]] = field(default_factory=dict)  # scope: its `global`/`nonlocal` names
    unscoped: set[str] = field(default_factory=set)  # names bound by `:=`
    names: frozenset[str] = frozenset()  # the names that may hold arrays, in some scope
    proven: frozenset[tuple[int, str]] = frozenset()  # the (scope, name) groups that may


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
    inside: list[tuple[ast.AST, ast.AST]] = field(default_factory=list)  # (node, its innermost function)
    param_seeds: set[int] = field(default_factory=set)  # id() of the functions whose parameters may be tracers


class Screen:
    """One module as the screens see it: its text, and its `ast` tree parsed on first use (or given, when the
    engine already parsed it to check the syntax)."""

    def __init__(self, text: str, tree: ast.Module | None = None) -> None:
        self.text = text
        if tree is not None:
            self.tree = tree

    @cached_property
    def tree(self) -> ast.Module:
        """The module's `ast`; raises SyntaxError (or ValueError) where Python cannot parse it."""
        return compile(self.text, "<screen>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)

    @cached_property
    def nodes(self) -> list[ast.AST]:
        return list(ast.walk(self.tree))

    # ---- imports -----------------------------------------------------------------------------------------------

    @cached_property
    def imports(self) -> dict[str, set[str]]:
        """Local name → every full name an absolute import anywhere in the module binds to it
        (`import jax.numpy as jnp`: jnp → jax.numpy; `import jax.numpy`: jax → jax; `from jax import lax`: lax → jax.lax)."""
        bound: dict[str, set[str]] = {}
        for node in self._import_statements:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        bound.setdefault(alias.asname, set()).add(alias.name)
                    else:
                        head = alias.name.split(".")[0]
                        bound.setdefault(head, set()).add(head)
            elif not node.level and node.module:
                for alias in node.names:
                    if alias.name != "*":
                        bound.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
        return bound

    def imported_names(self) -> Iterator[str]:
        """The full names that import statements name (`jax.experimental.stax` of `from jax.experimental import
        stax`, `jax.numpy` of `import jax.numpy as jnp`); relative and star imports left out."""
        for node in self._import_statements:
            if isinstance(node, ast.Import):
                yield from (alias.name for alias in node.names)
            elif not node.level and node.module:
                yield from (f"{node.module}.{alias.name}" for alias in node.names if alias.name != "*")

    @cached_property
    def _import_statements(self) -> list[ast.Import | ast.ImportFrom]:
        return [node for node, _ in self.statements if isinstance(node, (ast.Import, ast.ImportFrom))]

    def qualified_names(self, parts: Sequence[str]) -> Iterator[str]:
        """Every imported name that a dotted spelling (`("jnp", "zeros")`) may stand for: a superset of what
        LibCST's QualifiedNameProvider gives it with source IMPORT, in any scope of this module."""
        rest = ".".join(parts[1:])
        for full in self.imports.get(parts[0], ()):
            yield f"{full}.{rest}" if rest else full

    def may_resolve_to(self, expr: ast.expr, names: Iterable[str] | frozenset[str]) -> bool:
        """Whether a dotted expression may refer, through some import, to one of `names`."""
        parts = dotted(expr)
        return parts is not None and any(q in names for q in self.qualified_names(parts))

    # ---- names -------------------------------------------------------------------------------------------------

    def names(self) -> Iterator[tuple[str, ...]]:
        """Every spelling that LibCST may ask a qualified name for, split at its dots, with import-bound first
        parts only: each name and dotted attribute chain, each attribute, parameter, keyword, function, class and
        other identifier on its own, and each dotted prefix of an import's module and names."""
        bound = self.imports
        for node in self.nodes:
            kind = type(node)
            if kind is ast.Name:
                if node.id in bound:
                    yield (node.id,)
            elif kind is ast.Attribute:
                parts = dotted(node)
                if parts is not None and parts[0] in bound:
                    yield parts
                if node.attr in bound:
                    yield (node.attr,)
            elif kind in _NAMED:  # arg, keyword, def, class, except, match captures, type parameters
                for field_name in _NAMED[kind]:
                    value = getattr(node, field_name)
                    for name in [value] if isinstance(value, str) else value or ():
                        if name in bound:
                            yield (name,)
            elif kind is ast.alias:
                yield from _spellings(node.name, bound)
                if node.asname in bound:
                    yield (node.asname,)
            elif kind is ast.ImportFrom:
                yield from _spellings(node.module or "", bound)

    # ---- arrays ------------------------------------------------------------------------------------------------

    @cached_property
    def statements(self) -> list[tuple[ast.stmt, ast.AST]]:
        """Every statement, with the scope it binds names in: the innermost def or class around it, or the module."""
        found: list[tuple[ast.stmt, ast.AST]] = []
        stack = [(statement, self.tree) for statement in self.tree.body]
        while stack:
            statement, scope = stack.pop()
            found.append((statement, scope))
            inner = statement if isinstance(statement, _DEFS) else scope
            for block in _blocks(statement):
                stack.extend((child, inner) for child in block)
        return found

    def item_assignments(self) -> Iterator[tuple[ast.AST, str]]:
        """(scope, name) of every `name[...] = v`, `name[...] op= v` (nested and unpacked targets included)."""
        for statement, scope in self.statements:
            if isinstance(statement, ast.Assign):
                targets = statement.targets
            elif isinstance(statement, ast.AugAssign):
                targets = [statement.target]
            else:
                continue
            for target in targets:
                for base in item_assignment_bases(target):
                    yield scope, base

    def may_hold_array(self, scope: ast.AST, name: str) -> bool:
        """Whether ArrayAnalysis may prove that `name`, read in `scope`, holds a JAX array (see `_arrays`)."""
        arrays = self._arrays
        if name in arrays.unscoped or name in arrays.declared.get(id(scope), ()):
            return name in arrays.names  # `:=`, `global`, `nonlocal`: which scope owns the name is not plain here
        key = (id(scope), name)
        if key in arrays.groups:  # bound in `scope` itself, which therefore owns the name
            return key in arrays.proven
        return name in arrays.names

    @cached_property
    def _arrays(self) -> _Arrays:
        """ArrayAnalysis proves a name of a function or module scope when every binding of it there makes an array,
        given the names it proves (a greatest fixed point). Here the same rule runs on fewer bindings, so it proves
        at least as much: the bindings whose scope is plain from the statements (assignments, loop, `with` and
        `except` targets, imports, defs, classes, parameters), each `:=` as a group of its own, nothing of class
        bodies (where ArrayAnalysis proves nothing), and a name read in a value counts as an array if it is one in
        some scope. Only the names that item assignments update, and those their bindings read, are solved."""
        result = _Arrays()
        groups = result.groups

        def bind(scope: ast.AST, name: str, how: str, value: ast.AST | None = None) -> None:
            groups.setdefault((id(scope), name), (scope, name, []))[2].append((how, value))

        for statement, scope in self.statements:
            if isinstance(statement, _DEFS):
                bind(scope, statement.name, "other")
                if not isinstance(statement, ast.ClassDef):
                    arguments = statement.args
                    for param in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                        how = "param" if param.annotation is not None else "other"
                        bind(statement, param.arg, how, param.annotation)
                    for param in (arguments.vararg, arguments.kwarg):
                        if param is not None:
                            bind(statement, param.arg, "other")
            elif isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        bind(scope, target.id, "value", statement.value)
                    else:
                        for name in ast_target_names(target):
                            bind(scope, name, "other")
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                how = "value" if statement.value is not None else "declared"
                bind(scope, statement.target.id, how, statement.value)
            elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
                bind(scope, statement.target.id, "augmented", statement.value)
            elif isinstance(statement, (ast.For, ast.AsyncFor)):
                for name in ast_target_names(statement.target):
                    bind(scope, name, "other")
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                for item in statement.items:
                    for name in ast_target_names(item.optional_vars):
                        bind(scope, name, "other")
            elif isinstance(statement, _TRIES):
                for handler in statement.handlers:
                    if handler.name:
                        bind(scope, handler.name, "other")
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    bind(scope, alias.asname or alias.name.split(".")[0], "other")
            elif isinstance(statement, ast.ImportFrom):
                for alias in statement.names:
                    if alias.name != "*":
                        bind(scope, alias.asname or alias.name, "other")
            elif isinstance(statement, (ast.Global, ast.Nonlocal)):
                result.declared.setdefault(id(scope), set()).update(statement.names)
        candidates = [(key, bindings) for key, (scope, _, bindings) in groups.items() if not isinstance(scope, ast.ClassDef)]
        if ":=" in self.text:  # only then can there be a NamedExpr
            walruses = (n for n in self.nodes if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name))
            for index, node in enumerate(walruses):
                result.unscoped.add(node.target.id)
                candidates.append(((-1 - index, node.target.id), [("value", node.value)]))  # ids are never negative
        # The names to solve: those updated by item assignments, and every name their bindings' values read.
        by_name: dict[str, list] = {}
        for key, bindings in candidates:
            by_name.setdefault(key[1], []).append((key, bindings))
        wanted = {name for _, name in self.item_assignments() if name in by_name}
        todo = list(wanted)
        while todo:
            for _, bindings in by_name[todo.pop()]:
                for _, value in bindings:
                    for node in ast.walk(value) if value is not None else ():
                        if isinstance(node, ast.Name) and node.id in by_name and node.id not in wanted:
                            wanted.add(node.id)
                            todo.append(node.id)
        solving = [(key, bindings) for name in wanted for key, bindings in by_name[name]]
        names = set(wanted)
        while True:
            proven = {key for key, bindings in solving if all(self._binds_array(h, v, names) for h, v in bindings)}
            if {key[1] for key in proven} == names:
                result.names, result.proven = frozenset(names), frozenset(proven)
                return result
            names = {key[1] for key in proven}

    def _binds_array(self, how: str, value: ast.AST | None, names: set[str]) -> bool:
        """A superset of ArrayAnalysis._binds for one binding: whether it may make its name an array."""
        if how == "other":
            return False  # for/with/except targets, unpacking, imports, def, class, unannotated parameters
        if how == "declared":
            return True  # ArrayAnalysis: a bare annotation binds nothing, so it never disproves a name
        if how == "param":
            return self.may_resolve_to(value, arrays._ARRAY_ANNOTATIONS)
        if how == "augmented":  # `x += v`: arithmetic with a number or an array keeps an array an array
            return _is_number(value) or self._may_be_array(value, names)
        return self._may_be_array(value, names)

    def _may_be_array(self, expr: ast.AST, names: set[str]) -> bool:
        """A superset of ArrayAnalysis._is_array: whether `expr` may make a JAX array, if `names` hold arrays."""
        may = lambda e: self._may_be_array(e, names)  # noqa: E731
        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, ast.Call):
            func = expr.func
            if self.may_resolve_to(func, _ARRAY_CALLEES):
                return True
            if not isinstance(func, ast.Attribute):
                return False
            base = func.value
            if func.attr in arrays.AT_METHODS and _at_base(base) is not None and may(_at_base(base)):
                return True
            return func.attr in _ARRAY_METHODS and may(base)
        if isinstance(expr, ast.Attribute):
            return expr.attr in arrays._VIEW_ATTRIBUTES and may(expr.value)
        if isinstance(expr, ast.Subscript):
            return may(expr.value)
        if isinstance(expr, ast.BinOp):  # every `ast` binary operator is one of ArrayAnalysis's arithmetic ones
            sides = (expr.left, expr.right)
            return any(may(s) for s in sides) and all(_is_number(s) or may(s) for s in sides)
        if isinstance(expr, ast.UnaryOp):
            return isinstance(expr.op, _UNARY) and may(expr.operand)
        if isinstance(expr, ast.IfExp):
            return may(expr.body) and may(expr.orelse)
        if isinstance(expr, ast.NamedExpr):
            return may(expr.value)
        return False

    # ---- tracers and truth tests (predicates.py) -----------------------------------------------------------------

    def may_be_tracer(self, expr: ast.expr) -> bool:
        """Over-approximates PredicateAnalysis.tracer: a call that may resolve into an array namespace
        (`jnp.sum(x)`, not `jnp.shape(x)`), an array method of a possible tracer (`x.sum()`, `x.at[i].set(v)`),
        arithmetic or a comparison with one, an index into one, `.T`/`.real`/`.imag` of one, or a name that a
        binding in its function (or the functions around it, for a closure) may make a tracer."""
        return self._may_be_tracer(expr, self._scope_of(expr))

    def may_be_array(self, expr: ast.expr) -> bool:
        """Over-approximates PredicateAnalysis.array_evidence: a name with evidence of being an array rather
        than a container (an annotated parameter, an assignment, a use as `.shape`, `.at`, ... or as an argument
        of jax.numpy), through indexing and `.T`; any other expression that may be a tracer."""
        return self._may_hold_array_value(expr, self._scope_of(expr))

    def may_fail_truth(self, expr: ast.expr, strict: bool = False) -> bool:
        """Over-approximates `PredicateAnalysis.test(expr) is not Truth.OTHER`: whether Python's truth test of
        `expr` may raise TracerBoolConversionError (`and`/`or` by their first operand, which Python tests first;
        a bare name, attribute or index also needs `may_be_array`). `strict`: a parameter without a default
        may be a tracer only in a function of `_Traced.param_seeds` and where `never_traced_params` allows, no
        name in a function nothing traces, `n op= v` by its `v` (`strict_tracer_limits`, end of this module)."""
        if isinstance(expr, ast.BoolOp):
            return self.may_fail_truth(expr.values[0], strict)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            return self.may_fail_truth(expr.operand, strict)
        scope = self._scope_of(expr)
        if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
            return self._may_be_tracer(expr, scope, None, strict) and self._may_hold_array_value(expr, scope, None, strict)
        return self._may_be_tracer(expr, scope, None, strict)

    def _scope_of(self, expr: ast.expr) -> "_Scope | None":
        function = self._function_of.get(id(expr))
        return self._scopes.get(id(function)) if function is not None else None

    @cached_property
    def _function_of(self) -> dict[int, ast.AST]:
        return {id(node): function for node, function in self._traced.inside}

    @cached_property
    def _scopes(self) -> dict[int, "_Scope"]:
        """Per function (def or lambda): its bindings, as PredicateAnalysis reads them."""
        scopes: dict[int, _Scope] = {}

        def visit(node: ast.AST, scope: _Scope | None) -> None:
            if isinstance(node, _FUNCTIONS):
                inner = _Scope(parent=scope, function=node)
                scopes[id(node)] = inner
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
                        if argument.annotation is not None:
                            inner.arrays.add(argument.arg)
                body = [node.body] if isinstance(node, ast.Lambda) else node.body
                inside = {id(statement) for statement in body}
                for child in ast.iter_child_nodes(node):  # decorators, defaults and annotations: the outer scope
                    visit(child, inner if id(child) in inside else scope)
                return
            if scope is not None:
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
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.ExceptHandler, ast.Import,
                                       ast.ImportFrom, ast.ClassDef)):
                    for name in _statement_binds(node):
                        scope.bound.add(name)
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    if node.attr in ("shape", "ndim", "dtype", "size", "at", "T", "astype", "reshape"):
                        scope.evidence.add(node.value.id)
                elif isinstance(node, ast.Call):
                    parts = dotted(node.func)
                    if parts is not None and any(q.startswith("jax.numpy.") for q in self.qualified_names(parts)):
                        scope.evidence.update(arg.id for arg in node.args if isinstance(arg, ast.Name))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and scope is not None:
                scope.bound.add(node.name)
            for child in ast.iter_child_nodes(node):
                visit(child, scope)

        visit(self.tree, None)
        for scope in scopes.values():  # a use inside a nested function is evidence for the outer binding too
            outer = scope.parent
            while outer is not None:
                outer.evidence |= scope.evidence
                outer = outer.parent
        return scopes

    def _tracer_names(self, scope: "_Scope", strict: bool = False) -> frozenset[str]:
        solved = scope.solved_strict if strict else scope.solved
        if solved is None:
            names = set(scope.tracers)
            if strict and not isinstance(scope.function, ast.Lambda) and id(scope.function) not in self._traced.param_seeds:
                names -= scope.params
            augmented: list[tuple[str, ast.expr]] = []
            if strict:  # see `strict_tracer_limits` at the end of this module
                limits = strict_tracer_limits(self, scope)
                if limits is None:
                    scope.solved_strict = frozenset()
                    return scope.solved_strict
                removed, augmented = limits
                names -= removed
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
            return self._name_may_be_tracer(expr.id, scope, local, strict)
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
        return any(q in _TRACING for parts in self.names() for q in self.qualified_names(parts))

    def in_traced_code(self, *types: type[ast.AST]) -> Iterator[ast.AST]:
        """The nodes of these types whose innermost enclosing function (def, async def or lambda; the node may be
        in its body, decorators, defaults or annotations) TracedAnalysis may find traced. A superset: functions
        are matched by name instead of scope, and every transformation or lax call seeds every function or
        lambda that its arguments mention."""
        traced = self._traced
        return (node for node, function in traced.inside if isinstance(node, types) and id(function) in traced.functions)

    @cached_property
    def _traced(self) -> _Traced:
        """TracedAnalysis seeds the functions decorated with a transformation (`@jax.jit`, `@partial(jax.jit, ...)`)
        and those named or written as arguments of a transformation or lax call (`jax.vmap(f)`, `lax.scan(step,
        ...)`), then traces the functions that a traced one calls by name, and those nested in it."""
        result = _Traced()
        defs: dict[str, list[ast.AST]] = {}
        called: dict[int, set[str]] = {}  # function: the names it calls (`f(...)`), outside functions nested in it
        nested: dict[int, list[ast.AST]] = {}  # function: the functions directly inside it
        seeds: list[ast.AST] = []
        named: set[str] = set()  # names mentioned in the arguments of transformations and lax calls
        stack: list[tuple[ast.AST, ast.AST | None]] = [(self.tree, None)]
        while stack:
            node, function = stack.pop()
            if function is not None:
                result.inside.append((node, function))
            if isinstance(node, _FUNCTIONS):
                if function is not None:
                    nested.setdefault(id(function), []).append(node)
                if not isinstance(node, ast.Lambda):
                    defs.setdefault(node.name, []).append(node)
                    if any(self._mentions(d, TRANSFORMS) for d in node.decorator_list):
                        seeds.append(node)
                function = node
            elif isinstance(node, ast.Call):
                if function is not None and isinstance(node.func, ast.Name):
                    called.setdefault(id(function), set()).add(node.func.id)
                if self.may_resolve_to(node.func, _TRACING):
                    for argument in (*node.args, *(k.value for k in node.keywords)):
                        for inner in ast.walk(argument):
                            if isinstance(inner, ast.Lambda):
                                seeds.append(inner)
                            elif isinstance(inner, ast.Name):
                                named.add(inner.id)
            stack.extend((child, function) for child in ast.iter_child_nodes(node))
        seeds.extend(f for name in named for f in defs.get(name, ()))
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
        """Whether a name or dotted name anywhere inside `expr` may refer to one of `names`."""
        return any(isinstance(n, (ast.Name, ast.Attribute)) and self.may_resolve_to(n, names) for n in ast.walk(expr))


def traced_nodes(screen: Screen, *types: type[ast.AST]) -> Iterator[ast.AST]:
    """`screen.in_traced_code(*types)`, or every node of these types for a screen without that query."""
    in_traced_code = getattr(screen, "in_traced_code", None)
    if in_traced_code is not None:
        return in_traced_code(*types)
    return (node for node in ast.walk(screen.tree) if isinstance(node, types))


def dotted(expr: ast.AST) -> tuple[str, ...] | None:
    """`("jax", "numpy", "zeros")` for `jax.numpy.zeros`; None for anything but a name and its attributes."""
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return tuple(reversed(parts))


def head_name(expr: ast.AST) -> str | None:
    """The name that LibCST's full name of an expression starts with: through attributes, calls and subscripts
    (`print` of `print.x`, `print(a)(b)`, `print[0]`)."""
    while True:
        if isinstance(expr, ast.Attribute):
            expr = expr.value
        elif isinstance(expr, ast.Call):
            expr = expr.func
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        else:
            return expr.id if isinstance(expr, ast.Name) else None


def item_assignment_bases(target: ast.AST) -> Iterator[str]:
    """The names whose items an assignment target sets: `x` of `x[i]`, `x[i][j]`, `(x[i], y[j])`, `*x[i:]`."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from item_assignment_bases(element)
    elif isinstance(target, ast.Starred):
        yield from item_assignment_bases(target.value)
    elif isinstance(target, ast.Subscript):
        base = target.value
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Name):
            yield base.id


def _blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
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
    """(name, the value it gets, if one expression) for each name an assignment target binds."""
    if isinstance(target, ast.Name):
        yield target.id, value
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
        for index, element in enumerate(target.elts):
            yield from _bound_values(element, values[index] if values is not None else None)
    elif isinstance(target, ast.Starred):
        yield from _bound_values(target.value, None)


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


def ast_target_names(target: ast.AST | None) -> Iterator[str]:
    """The names an assignment target binds (`a`, `b` of `a, (b, *_) = ...`); not attributes or items."""
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from ast_target_names(element)
    elif isinstance(target, ast.Starred):
        yield from ast_target_names(target.value)


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


def _at_base(expr: ast.AST) -> ast.AST | None:
    """`x` in `x.at[idx]`, else None."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "at":
        return expr.value.value
    return None


# ---- facts of the rules' screens, computed once per module ---------------------------------------------------


def _once_per_screen(fact):
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


# ---- JF503, JF504: functions called in loops ----------------------------------------------------------------


@_once_per_screen
def names_called_in_loops(screen: Screen) -> frozenset[str]:
    """The names called as `name(...)` anywhere inside a `for` or `while` loop (nested code included)."""
    return frozenset(
        node.func.id
        for loop in screen.nodes if isinstance(loop, (ast.For, ast.While))
        for node in ast.walk(loop) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    )


# ---- JF704, JF702: calls of compiled functions (jit.py's `calls_compiled`) -------------------------------------------

_COMPILERS = frozenset({"jax.jit", "jax.pmap"})


def _may_compile(screen: Screen, expr: ast.AST) -> bool:
    """A superset of jit.py's `compiler`: `jax.jit`, `jax.jit(...)`, `partial(jax.jit, ...)` (any callee whose
    first positional argument may be jit or pmap)."""
    if screen.may_resolve_to(expr, _COMPILERS):
        return True
    if not isinstance(expr, ast.Call):
        return False
    if screen.may_resolve_to(expr.func, _COMPILERS):
        return True
    # the first positional argument (`partial(jax.jit, ...)`), which may be a `*` or, with none before it, a `**`
    first = expr.args[0] if expr.args else next((k for k in expr.keywords if k.arg is None), None)
    if isinstance(first, (ast.Starred, ast.keyword)):
        first = first.value
    return first is not None and screen.may_resolve_to(first, _COMPILERS)


@_once_per_screen
def compiled_names(screen: Screen) -> frozenset[str]:
    """The names that some binding may make a compiled callable (jit.py's `_compiles`), matched by name instead of
    scope: a def (or async def) with a decorator that may be jit/pmap, and `name = <call>` whose callee may be
    jit/pmap or a call that makes one (`jax.jit(...)(f)`, `partial(jax.jit, ...)(f)`)."""
    names: set[str] = set()
    for statement, _ in screen.statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_may_compile(screen, d) for d in statement.decorator_list):
                names.add(statement.name)
        elif isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            if _may_compile(screen, statement.value.func):
                names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
    return frozenset(names)


def may_call_compiled(screen: Screen, call: ast.Call) -> bool:
    """A superset of jit.py's `calls_compiled(call)`: `jax.jit(f)(x)` (or pmap), or a call of a name that some
    binding in the module may make a compiled callable."""
    func = call.func
    if isinstance(func, ast.Call):
        return screen.may_resolve_to(func.func, _COMPILERS)
    return isinstance(func, ast.Name) and func.id in compiled_names(screen)


# ---- JF301, JF705: the ways each name is bound that may make it an array ------------------------------------------

_CONTAINERS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_SCALARS = (ast.Constant, ast.JoinedStr, ast.Lambda, ast.GeneratorExp)


@_once_per_screen
def array_bindings(screen: Screen) -> dict[str, frozenset[str]]:
    """Name → the kinds of its bindings, in any scope, that DataflowAnalysis.is_array_like may count for it:
    "annotated" (a parameter with an annotation), "parameter" (one without), "value" (`name = v`, `name: T = v`
    or `name := v` with a `v` that is no literal container, constant, f-string, lambda or generator; a bare
    `name: T`), "scalar" (`name = v` with one of those but a container: a traced name may hold it), "augmented"
    (`name op= v`). ArrayAnalysis proves a name only when all its bindings in its scope make arrays, which
    "annotated", "value" and "augmented" may; the traced-name path also takes "parameter" and "scalar".
    Names that only loops, `with`, imports, unpacking, defs and classes bind are absent."""
    kinds: dict[str, set[str]] = {}

    def add(name: str, kind: str) -> None:
        kinds.setdefault(name, set()).add(kind)

    for node in screen.nodes:
        kind = type(node)
        if kind is ast.arg:
            add(node.arg, "annotated" if node.annotation is not None else "parameter")
        elif kind is ast.Assign:
            value = node.value
            how = None if isinstance(value, _CONTAINERS) else "scalar" if isinstance(value, _SCALARS) else "value"
            if how is not None:
                for target in node.targets:
                    if type(target) is ast.Name:
                        add(target.id, how)
        elif kind is ast.AugAssign:
            if type(node.target) is ast.Name:
                add(node.target.id, "augmented")
        elif kind in (ast.AnnAssign, ast.NamedExpr):
            value = node.value
            if type(node.target) is ast.Name and not isinstance(value, (*_CONTAINERS, *_SCALARS)):
                add(node.target.id, "value")
    return {name: frozenset(how) for name, how in kinds.items()}


# ---- JF201, JF202: truth tests of `if` statements and conditional expressions -----------------------------------


def _elif(node: ast.If) -> ast.If | None:
    """The `elif` of `node`, if it has one. `ast` writes `elif t:` and `else:` holding only `if t:` alike; the
    `if` of an `else` block is indented deeper than the `else`, an `elif` starts in the column of its `if`."""
    if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and node.orelse[0].col_offset == node.col_offset:
        return node.orelse[0]
    return None


def branch_tests(screen: Screen, *types: type[ast.AST]) -> Iterator[ast.AST]:
    """The nodes of these types (ast.If, ast.IfExp) in code TracedAnalysis may trace whose test PredicateAnalysis
    may prove to fail Python's truth test (`Screen.may_fail_truth`, strict: with parameters only of functions a
    transformation or lax call seeds or traced code calls by name); an `if` of an `if`/`elif` chain (JF204's)
    never."""
    nodes = list(traced_nodes(screen, *types))
    chained = set()
    for node in nodes:
        if isinstance(node, ast.If) and (link := _elif(node)) is not None:
            chained.update((id(node), id(link)))
    for node in nodes:
        if id(node) not in chained and screen.may_fail_truth(node.test, strict=True):
            yield node


# ---- JF101, JF102: loops that may carry a name from one step to the next ------------------------------------------

_DYNAMIC_SCOPE = frozenset({"locals", "vars", "eval", "exec"})


def _reads(screen: Screen, function: ast.AST) -> frozenset[str] | None:
    """The names `function` (nested functions included) may read: loaded names, `op=` targets, `global` and
    `nonlocal` names; None where it calls `locals`, `vars`, `eval` or `exec` (any name may be read)."""
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
    function = screen._function_of.get(id(loop))
    if function is None:
        return True  # module level: not traced code anyway, but nothing here to decide it
    reads = _reads(screen, function)
    targets = set(ast_target_names(loop.target)) if isinstance(loop, (ast.For, ast.AsyncFor)) else set()
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
            if any(name not in targets and (reads is None or name in reads) for name in bound):
                return True
    return False


# ---- JF704: a called name bound in the caller's own function by something that compiles nothing ---------------

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@_once_per_screen
def _plain_local_calls(screen: Screen) -> frozenset[int]:
    """id() of each call `name(...)` read in a def's own scope (its body outside nested defs, classes, lambdas and
    comprehensions) → the names that def binds there by a binding jit.py's `_compiles` rejects: a parameter, an
    unpacking, `for`/`with` target, `op=`, annotated or `:=` target, an import, a class, a def no decorator of which
    may compile, `name = v` with no call of something that may make a compiled function; with no `global` or
    `nonlocal` for it. LibCST's scope of such a name is that def's, so its assignments there include this one, and
    `calls_compiled` is False."""
    found: set[int] = set()
    for function, _ in screen.statements:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = function.args
        plain = {p.arg for p in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                 arguments.vararg, arguments.kwarg) if p is not None}
        declared: set[str] = set()
        calls: list[ast.Call] = []
        stack: list[ast.AST] = list(function.body)
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                if kind is ast.ClassDef or not any(_may_compile(screen, d) for d in node.decorator_list):
                    plain.add(node.name)
                stack.extend(node.decorator_list)  # evaluated in this scope; the body is not
                if kind is ast.ClassDef:
                    stack.extend((*node.bases, *node.keywords))
                else:
                    stack.append(node.args)
                    if node.returns is not None:
                        stack.append(node.returns)
                continue
            if kind is ast.arguments:  # a nested def's defaults and annotations (its parameters are its own)
                stack.extend(d for d in (*node.defaults, *node.kw_defaults) if d is not None)
                stack.extend(p.annotation for p in (*node.posonlyargs, *node.args, *node.kwonlyargs, node.vararg,
                                                    node.kwarg) if p is not None and p.annotation is not None)
                continue
            if kind is ast.Lambda or kind in _COMPREHENSIONS:
                continue  # a scope of its own: no decision for the calls inside
            if kind is ast.Assign:
                compiles = isinstance(node.value, ast.Call) and _may_compile(screen, node.value.func)
                for target in node.targets:
                    if not (compiles and isinstance(target, ast.Name)):
                        plain.update(ast_target_names(target))
            elif kind is ast.Name and type(node.ctx) is ast.Store:
                plain.add(node.id)  # `for`, `with`, `op=`, annotated and `:=` targets (Assign's are judged above)
            elif kind in (ast.Import, ast.ImportFrom):
                plain.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
            elif kind in (ast.Global, ast.Nonlocal):
                declared.update(node.names)
            elif kind is ast.Call and type(node.func) is ast.Name:
                calls.append(node)
            if kind is ast.Assign:
                stack.extend(t for t in node.targets if not isinstance(t, ast.Name))
                stack.append(node.value)
            else:
                stack.extend(ast.iter_child_nodes(node))
        plain -= declared
        found.update(id(call) for call in calls if call.func.id in plain)
    return frozenset(found)


def may_call_compiled_here(screen: Screen, call: ast.Call) -> bool:
    """`may_call_compiled`, and for `name(...)` in a def's own scope, no binding of `name` there that compiles
    nothing (`_plain_local_calls`): chex's `fn, fn_jitted = ...; fn([1], [2])` beside a jitted `def fn` elsewhere."""
    return may_call_compiled(screen, call) and id(call) not in _plain_local_calls(screen)


# ---- strict tracers: parameters no seed makes traced, and functions nothing traces ------------------------------
#
# PredicateAnalysis proves a parameter a tracer only where TracedAnalysis gives it Kind.TRACED (`_param_tracer`):
# the join over every seed of its function (`_param_kinds_for`: `static_argnums`, `in_axes=None`, grad's `argnums`,
# `self`, equinox's filtered transformations leave parameters non-TRACED) and the kinds traced calls of it by name
# pass; and then, unless a seed makes it TRACED, every such call must pass it a tracer. And nothing is a tracer in a
# function TracedAnalysis does not trace (`_tracer` asks `in_traced_code` first; a closure's binding is judged
# where it is bound).


def _untraced_by(transform: str, keywords: list[ast.keyword], in_axes: ast.expr | None, params: list[str],
                 bound: int = 0) -> set[str]:
    """traced._param_kinds_for on the `ast`: the parameters a seed by `transform` with these options leaves
    non-TRACED (all of them where `transform` is no transformation: then nothing seeds)."""
    if transform not in TRANSFORMS or transform in _FILTERED:
        return set(params)
    untraced = set(params[:bound])
    if params and params[0] in ("self", "cls"):
        untraced.add(params[0])
    options = {k.arg: k.value for k in keywords if k.arg is not None}
    if transform in _JIT_LIKE:
        for key in ("static_argnums", "static_broadcasted_argnums"):
            if key in options:
                numbers = _ast_literals(options[key], int)
                if numbers is None:
                    return set(params)
                for n in numbers:
                    index = bound + n if n >= 0 else len(params) + n
                    if 0 <= index < len(params):
                        untraced.add(params[index])
        if "static_argnames" in options:
            names = _ast_literals(options["static_argnames"], str)
            if names is None:
                return set(params)
            untraced.update(n for n in names if n in params)
    elif transform in _GRAD_LIKE:
        argnums = _ast_literals(options["argnums"], int) if "argnums" in options else [0]
        if argnums is None:
            return set(params)
        untraced.update(p for index, p in enumerate(params[bound:]) if index not in argnums)
    elif transform in _VMAP_LIKE:
        axes = options["in_axes"] if "in_axes" in options else in_axes
        if isinstance(axes, (ast.Tuple, ast.List)):
            free = params[bound:]
            for index, element in enumerate(axes.elts):
                if index < len(free) and isinstance(element, ast.Constant) and element.value is None:
                    untraced.add(free[index])
    return untraced


def _ast_literals(expr: ast.expr, kind: type) -> list | None:
    """traced._literal_ints / _literal_strs on the `ast`: a literal (an int with or without `-`), or a tuple or
    list of them, flattened."""
    if isinstance(expr, ast.Constant) and type(expr.value) is kind:
        return [expr.value]
    if kind is int and isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        inner = expr.operand
        return [-inner.value] if isinstance(inner, ast.Constant) and type(inner.value) is int else None
    if isinstance(expr, (ast.Tuple, ast.List)):
        values: list = []
        for element in expr.elts:
            inner = _ast_literals(element, kind)
            if inner is None:
                return None
            values.extend(inner)
        return values
    return None


def _candidates(screen: Screen, expr: ast.expr) -> set[str]:
    parts = dotted(expr.value if isinstance(expr, ast.Starred) else expr)
    return set(screen.qualified_names(parts)) if parts is not None else set()


def _decorator_untraced(screen: Screen, decorator: ast.expr, params: list[str]) -> set[str]:
    """traced._transform_of and _param_kinds_for: what each way LibCST may resolve the decorator leaves
    non-TRACED, intersected (a decorator that is no transformation leaves everything)."""
    untraced = set(params)
    if not isinstance(decorator, ast.Call):
        for transform in _candidates(screen, decorator):
            untraced &= _untraced_by(transform, [], None, params)
        return untraced
    positional = decorator.args
    second = positional[1] if len(positional) >= 2 and not isinstance(positional[1], ast.Starred) else None
    for callee in _candidates(screen, decorator.func):
        if callee in TRANSFORMS and not positional:
            untraced &= _untraced_by(callee, decorator.keywords, None, params)
        elif callee in _PARTIAL and positional:
            for transform in _candidates(screen, positional[0]):
                untraced &= _untraced_by(transform, decorator.keywords, second, params)
    return untraced


def _seedable(screen: Screen, expr: ast.expr) -> Iterator[str]:
    """The names traced._functions_in may resolve to functions in an argument: a name, the items of a tuple or
    list, and the first argument of a call that may be partial or a transformation (lambdas seed themselves)."""
    if isinstance(expr, ast.Starred):
        expr = expr.value
    if isinstance(expr, ast.Name):
        yield expr.id
    elif isinstance(expr, (ast.Tuple, ast.List)):
        for element in expr.elts:
            yield from _seedable(screen, element)
    elif isinstance(expr, ast.Call) and screen.may_resolve_to(expr.func, _PARTIALS | TRANSFORMS):
        for argument in (*expr.args, *(k.value for k in expr.keywords)):
            yield from _seedable(screen, argument)


def _call_untraced(screen: Screen, call: ast.Call, params: list[str]) -> set[str]:
    """What a transformation or lax call that may seed a function leaves non-TRACED: where the function is the
    call's first argument itself and every way LibCST may resolve the callee is a transformation, as
    `_untraced_by` says; otherwise nothing (a lax body, `partial`, a list: every parameter may be TRACED)."""
    positional = call.args
    if not positional or any(isinstance(a, ast.Starred) for a in positional) or not isinstance(positional[0], ast.Name):
        return set()
    transforms = _candidates(screen, call.func)
    if not transforms or not transforms <= TRANSFORMS:
        return set()
    second = positional[1] if len(positional) >= 2 else None
    untraced = set(params)
    for transform in transforms:
        untraced &= _untraced_by(transform, call.keywords, second, params)
    return untraced


@_once_per_screen
def never_traced_params(screen: Screen) -> dict[int, frozenset[str]]:
    """id() of a def → parameters PredicateAnalysis never proves tracers: those every seed of the def may leave
    non-TRACED (its decorators, `_decorator_untraced`; the transformation and lax calls that may name it,
    `_call_untraced`; a def nothing seeds: all), less those a call of its name in code that may be traced may pass
    a tracer (`may_be_tracer`) and those also bound by `op=`, `:=`, `global` or `nonlocal` (a tracer, maybe)."""
    defs: dict[str, list[tuple[ast.AST, list[str], set[str]]]] = {}
    for function, _ in screen.statements:
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        arguments = function.args
        params = [p.arg for p in (*arguments.posonlyargs, *arguments.args)]
        params += [arguments.vararg.arg] if arguments.vararg else []
        params += [p.arg for p in arguments.kwonlyargs] + ([arguments.kwarg.arg] if arguments.kwarg else [])
        untraced = set(params)
        for decorator in function.decorator_list:
            if untraced and screen._mentions(decorator, TRANSFORMS):
                untraced &= _decorator_untraced(screen, decorator, params)
        if untraced:
            defs.setdefault(function.name, []).append((function, params, untraced))
    if not defs:
        return {}
    for node in _tracing_calls(screen):  # the calls that may seed a def of one of these names
        for name in {n for a in (*node.args, *(k.value for k in node.keywords)) for n in _seedable(screen, a)}:
            for _, params, untraced in defs.get(name, ()):
                untraced &= _call_untraced(screen, node, params)
    sites: dict[str, list[ast.Call]] = {}  # name: its calls in code that may be traced
    for call in screen.in_traced_code(ast.Call):
        if isinstance(call.func, ast.Name) and call.func.id in defs:
            sites.setdefault(call.func.id, []).append(call)
    found: dict[int, frozenset[str]] = {}
    for name, functions in defs.items():
        for function, _, untraced in functions:
            never = untraced - _params_passed_tracers(screen, function, sites.get(name, ())) if untraced else untraced
            for node in ast.walk(function) if never else ():
                if isinstance(node, (ast.AugAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name):
                    never.discard(node.target.id)
                elif isinstance(node, (ast.Global, ast.Nonlocal)):
                    never.difference_update(node.names)
            if never:
                found[id(function)] = frozenset(never)
    return found


@_once_per_screen
def _tracing_calls(screen: Screen) -> list[ast.Call]:
    """The calls that may be a JAX transformation or a lax call that takes a body."""
    return [node for node in screen.nodes if type(node) is ast.Call and screen.may_resolve_to(node.func, _TRACING)]


def _params_passed_tracers(screen: Screen, function: ast.AST, calls) -> set[str]:
    """The parameters of `function` to which one of `calls` may pass a tracer (all of them where a call passes
    `*args` or `**kwargs`)."""
    arguments = function.args
    positional = [p.arg for p in (*arguments.posonlyargs, *arguments.args)]
    every = {p.arg for p in (*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs,
                             arguments.kwarg) if p is not None}
    passed: set[str] = set()
    for call in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return every
        for index, value in enumerate(call.args):
            target = positional[index] if index < len(positional) else arguments.vararg.arg if arguments.vararg else None
            if target is not None and target not in passed and screen.may_be_tracer(value):
                passed.add(target)
        for keyword in call.keywords:
            target = keyword.arg if keyword.arg in every else arguments.kwarg.arg if arguments.kwarg else None
            if target is not None and target not in passed and screen.may_be_tracer(keyword.value):
                passed.add(target)
    return passed


def strict_tracer_limits(screen: Screen, scope: "_Scope") -> tuple[frozenset[str], list[tuple[str, ast.expr]]] | None:
    """For Screen's strict tracers: None where no name of `scope` may be a tracer (TracedAnalysis does not trace
    its function); else the names to take out of the scope's seeds (its parameters that are never tracers,
    `never_traced_params`, and the names only `op=` puts there) and each `name op= value` of the function, which
    makes `name` a tracer where `value` may be one (PredicateAnalysis: an augmented assignment is a tracer where
    its value is one or every binding reaching it is)."""
    function = scope.function
    if id(function) not in screen._traced.functions:
        return None
    augmented, only = _augmented(screen).get(id(function), ([], frozenset()))
    return never_traced_params(screen).get(id(function), frozenset()) | (only - scope.params), augmented


@_once_per_screen
def _augmented(screen: Screen) -> dict[int, tuple[list[tuple[str, ast.expr]], frozenset[str]]]:
    """id() of a function → (name, value) of each `name op= value` in it (as Screen._scopes assigns them: nested
    defs and lambdas aside), and the names among them that no `:=`, `global` or `nonlocal` anywhere binds."""
    found: dict[int, tuple[list, set]] = {}
    others: set[str] = set()
    function_of = screen._function_of
    for node in screen.nodes:
        kind = type(node)
        if kind is ast.AugAssign:
            function = function_of.get(id(node))
            if function is not None and type(node.target) is ast.Name:
                values, targets = found.setdefault(id(function), ([], set()))
                values.append((node.target.id, node.value))
                targets.add(node.target.id)
        elif kind is ast.NamedExpr:
            if type(node.target) is ast.Name:
                others.add(node.target.id)
        elif kind is ast.Global or kind is ast.Nonlocal:
            others.update(node.names)
    return {key: (values, frozenset(targets - others)) for key, (values, targets) in found.items()}


def may_be_tracer_strict(screen: Screen, expr: ast.expr) -> bool:
    """`Screen.may_be_tracer` as PredicateAnalysis.tracer needs it: a parameter only of a function that a
    transformation or lax call seeds or traced code calls by name, never one jit makes static, and no name of a
    function nothing traces (`strict_tracer_limits`)."""
    return screen._may_be_tracer(expr, screen._scope_of(expr), None, True)


# ---- traced functions, with the names that seed or call them resolved through the functions around their use ------


@_once_per_screen
def scoped_traced_functions(screen: Screen) -> frozenset[int]:
    """id() of the functions TracedAnalysis may trace: `_Traced.functions` with a name that a transformation or lax
    call is given (`_seedable`), or that traced code calls, taken for a def only where LibCST's scope of the name may
    hold that def: the def is at module level or in a class, or in the function that reads the name or one around
    it, or its name is declared `global` or `nonlocal` somewhere (optax's tests: `jax.vmap(reference_impl)` in one
    method does not trace the `reference_impl` another method defines)."""
    function_of = screen._function_of
    declared = {name for node, _ in screen.statements if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names}
    nested: dict[int, list[ast.AST]] = {}
    calls: dict[int, list[ast.Call]] = {}
    for node, function in screen._traced.inside:
        if isinstance(node, _FUNCTIONS):
            nested.setdefault(id(function), []).append(node)
        elif type(node) is ast.Call and type(node.func) is ast.Name:
            calls.setdefault(id(function), []).append(node)
    defs: dict[str, list[ast.AST]] = {}
    seeds: list[ast.AST] = []
    named: list[tuple[str, ast.AST]] = []
    for node, _ in screen.statements:
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            defs.setdefault(node.name, []).append(node)
            if any(screen._mentions(d, TRANSFORMS) for d in node.decorator_list):
                seeds.append(node)
    for node in _tracing_calls(screen):
        for argument in (*node.args, *(k.value for k in node.keywords)):
            seeds.extend(inner for inner in ast.walk(argument) if isinstance(inner, ast.Lambda))
            named.extend((name, node) for name in _seedable(screen, argument))

    def visible(name: str, use: ast.AST) -> Iterator[ast.AST]:
        around: set[int] = set()
        function = function_of.get(id(use))
        while function is not None:
            around.add(id(function))
            function = function_of.get(id(function))
        for definition in defs.get(name, ()):
            owner = function_of.get(id(definition))
            if owner is None or id(owner) in around or name in declared:
                yield definition

    for name, use in named:
        seeds.extend(visible(name, use))
    found: set[int] = set()
    while seeds:
        function = seeds.pop()
        if id(function) not in found:
            found.add(id(function))
            seeds.extend(nested.get(id(function), ()))
            for call in calls.get(id(function), ()):
                seeds.extend(visible(call.func.id, call))
    return frozenset(found)
