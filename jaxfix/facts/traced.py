"""Which functions run under JAX tracing, and which values inside them are traced: the fact, on `ast`.

A function is traced when a JAX transformation wraps it (`@jax.jit`, `partial(jax.jit, ...)`, `jax.vmap(f)`,
`eqx.filter_jit`, ...), when it is a body passed to lax control flow (`lax.scan(step, ...)`), when a traced
function of the same module calls it by name, when it is defined inside a traced function and used there, or
when the project index says another module or a library's convention traces it (`project.traced`).

Values are classified per function into three kinds, joined by `max`:
- STATIC: known at trace time (literals, `.shape`/`.ndim`/`.dtype`/`.size`, `len(...)`, `is None`, static
  arguments, module constants, indices of a static `range`);
- TRACED: depends on a traced argument or on a JAX computation;
- UNKNOWN: anything else. Rules treat UNKNOWN as "do not rewrite".
The fact is flow-insensitive: a name's kind is the join over all its bindings in the function (names are looked up
by spelling through the enclosing functions, as the rules have always read it); which def a called name reaches
is the binder's scope resolution.

Names through `binder.Binder`, library rows from `knowledge/`; built per file on first question, each answer
memoized. It agreed exactly with the LibCST TracedAnalysis it replaced on examples/, corpus/, tests/planted and
the 10 real trees (benchmarks/agreement/real-code.md); `benchmarks/agreement.py` (`traced-exact`, `kind-exact`,
`guarded-exact`) now checks what the rules' adapter (analysis/traced.py) answers through the bridge."""

from __future__ import annotations

import ast
import builtins
import enum
from typing import Iterable, Iterator, NamedTuple

from jaxfix.facts.binder import Binder
from jaxfix.facts.knowledge.jax import (
    ARRAY_NAMESPACES, HOST_CALLBACKS, STATIC_ATTRIBUTES, STATIC_CALLS, TREE_MAPS, TREE_STRUCTURES,
)
from jaxfix.facts.knowledge.tables import (
    COMPILING, FILTERED, GRAD_LIKE, JIT_LIKE, LAX_BODIES, STAGING, TRANSFORMS, VMAP_LIKE,
)


# Why a loop rule leaves a loop alone in a function that no compiling transformation reaches.
NOT_COMPILED = (
    "no jax.jit reaches this function (only eager jax.vmap/jax.grad), where a lax loop is compiled again on every "
    "call; jit its caller"
)


class Kind(enum.IntEnum):
    STATIC = 0
    UNKNOWN = 1
    TRACED = 2


def join(kinds: Iterable[Kind]) -> Kind:
    return max(kinds, default=Kind.STATIC)


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_PARTIAL = {"functools.partial"}
_BUILTINS = frozenset(dir(builtins))
_TRY = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_BINDING_STATEMENTS = (
    ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.withitem, ast.ExceptHandler,
    ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
)


class Arg(NamedTuple):
    """One argument of a call in source order (`ast` keeps positional and keyword arguments apart)."""

    keyword: str | None
    value: ast.expr  # a starred argument's own expression
    star: str  # "", "*" or "**"


def call_args(call: ast.Call) -> list[Arg]:
    found = [Arg(None, a.value, "*") if type(a) is ast.Starred else Arg(None, a, "") for a in call.args]
    if call.keywords:
        keywords = [Arg(k.arg, k.value, "" if k.arg is not None else "**") for k in call.keywords]
        if found and _start(call.keywords[0]) < _start(call.args[-1]):  # `f(k=1, *rest)`
            nodes = [*call.args, *call.keywords]
            order = sorted(range(len(nodes)), key=lambda i: _start(nodes[i]))
            every = [*found, *keywords]
            return [every[i] for i in order]
        found += keywords
    return found


def _start(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)


def _unstarred(node: ast.expr) -> ast.expr:
    return node.value if type(node) is ast.Starred else node


def target_names(target: ast.AST) -> list[str]:
    """Local names an assignment target binds (`a, (b, *c)` → a, b, c); attributes and subscripts bind none."""
    if type(target) is ast.Name:
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in target_names(element)]
    if type(target) is ast.Starred:
        return target_names(target.value)
    return []


def param_names(arguments: ast.arguments) -> list[str]:
    """Every parameter name, in order: positional-only, ordinary, *args, keyword-only, **kwargs."""
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    if arguments.vararg is not None:
        names.append(arguments.vararg.arg)
    names.extend(a.arg for a in arguments.kwonlyargs)
    if arguments.kwarg is not None:
        names.append(arguments.kwarg.arg)
    return names


class _Function:
    __slots__ = ("node", "parent", "params", "bindings", "bound", "param_kinds", "env")

    def __init__(self, node: ast.AST, parent: _Function | None) -> None:
        self.node = node
        self.parent = parent
        self.params: list[str] = param_names(node.args)
        self.bindings: list[tuple[str, object]] = []  # (name, expression or Kind)
        self.bound: set[str] = set()  # the names of `bindings`
        self.param_kinds: dict[str, Kind] = {}
        self.env: dict[str, Kind] = {}


class Traced:
    """The traced functions of one module and the kinds of its expressions. `project`: the module's facts from the
    project index (`traced`: qualified def name → (transforms, parameter kinds); `static_attrs`), or None."""

    def __init__(self, tree: ast.Module, binder: Binder | None = None, project=None) -> None:
        self.tree = tree
        self.binder = binder if binder is not None else Binder(tree)
        self._project = project
        self._solved = False
        self._kinds: dict[ast.AST, Kind] = {}  # the kind of each expression asked, where it stands
        self._via: dict[ast.AST, frozenset[str]] | None = None

    # ---- queries ------------------------------------------------------------------------------------------------

    def is_traced(self, function: ast.AST) -> bool:
        self._solve()
        return function in self._traced

    def traced_functions(self) -> Iterator[ast.AST]:
        self._solve()
        return iter(self._traced)

    def enclosing_function(self, node: ast.AST) -> ast.AST | None:
        """The innermost def or lambda whose code holds `node`: its body, and also its decorators, defaults and
        annotations (the code of the def statement); None at module level."""
        parents = self.binder.parents
        parent = parents.get(node)
        while parent is not None:
            if type(parent) in FUNCTIONS:
                return parent
            parent = parents.get(parent)
        return None

    def in_traced_code(self, node: ast.AST) -> bool:
        function = self.enclosing_function(node)
        return function is not None and self.is_traced(function)

    def guarded(self, node: ast.AST) -> bool:
        """Whether `node` sits in the body of a `try` (in its own function) that catches the error a traced value
        raises in a Python test (`except jax.errors.ConcretizationTypeError`, TracerBoolConversionError, any
        `jax.errors` class, Exception or a bare except): code written to run under tracing and eagerly alike."""
        parents = self.binder.parents
        child, parent = node, parents.get(node)
        while parent is not None and type(parent) not in FUNCTIONS:
            if isinstance(parent, _TRY) and any(child is s for s in parent.body):
                if any(self._catches_tracer_errors(h.type) for h in parent.handlers):
                    return True
            child, parent = parent, parents.get(parent)
        return False

    def _catches_tracer_errors(self, kind: ast.expr | None) -> bool:
        if kind is None:
            return True
        if type(kind) is ast.Tuple:
            return any(self._catches_tracer_errors(_unstarred(e)) for e in kind.elts)
        qualified = self.binder.qualified(kind) or (kind.id if type(kind) is ast.Name else "")
        return qualified.startswith("jax.errors.") or qualified in (
            "Exception", "BaseException", "TypeError", "jax.core.ConcretizationTypeError"
        )

    def param_kind(self, function: ast.AST, name: str) -> Kind:
        self._solve()
        return self._functions[function].param_kinds.get(name, Kind.UNKNOWN)

    def kind(self, expr: ast.AST, *, within: ast.AST | None = None, assume: dict[str, Kind] | None = None) -> Kind:
        """The kind of an expression where it stands (inside its enclosing function, or `within`), optionally as if
        the names in `assume` had those kinds (a loop rule asks what a body computes once its carried variables are
        traced)."""
        self._solve()
        if within is None and not assume:
            found = self._kinds.get(expr)
            if found is None:
                function = self.enclosing_function(expr)
                found = self._kinds[expr] = self._kind(expr, self._functions.get(function) if function else None)
            return found
        function = within if within is not None else self.enclosing_function(expr)
        info = self._functions.get(function) if function is not None else None
        env = {**info.env, **assume} if assume and info is not None else None
        return self._kind(expr, info, env)

    def name_kind(self, name: str, function: ast.AST | None) -> Kind:
        """The kind of a mention of `name` in `function` (None: at module level), wherever it stands there."""
        self._solve()
        info = self._functions.get(function) if function is not None else None
        return self._kind(ast.Name(id=name, ctx=ast.Load()), info)

    def transforms(self, function: ast.AST) -> frozenset[str]:
        """The transformations (qualified names; `jax.lax.scan` and the like for bodies) through which this module
        traces `function`: those that wrap it, or wrap a traced function that calls it or nests it. Empty for
        functions that are not traced."""
        self._solve()
        if self._via is None:
            via = {f: set(names) for f, names in self._seeded_by.items() if f in self._traced}
            changed = True
            while changed:  # the same edges as `_propagate_from`: calls by name and nested functions
                changed = False
                for caller in list(via):
                    reached = [f for call in self._calls_in.get(caller, ()) for f in self._definitions_of_callee(call)]
                    reached += [f for f in self._nested.get(caller, ()) if f not in self._host_only]
                    for callee in reached:
                        if callee in self._traced and not via[caller] <= via.setdefault(callee, set()):
                            via[callee] |= via[caller]
                            changed = True
            self._via = {f: frozenset(names) for f, names in via.items()}
        return self._via.get(function, frozenset())

    def staged(self, function: ast.AST) -> bool:
        """Whether some transformation stages `function` (jit, vmap, a lax body, ...), so that a Python `if`/`while`
        on one of its traced values fails there; False when only jax.grad-like transformations reach it."""
        return any(t in STAGING or t in LAX_BODIES for t in self.transforms(function))

    def compiled(self, function: ast.AST) -> bool:
        """Whether `function` runs inside one compiled program (jit, pmap, shard_map, a lax body), so that a lax loop
        written in it compiles once (under eager jax.vmap or jax.grad alone each call compiles it again)."""
        return any(t in COMPILING or t in LAX_BODIES for t in self.transforms(function))

    def seeded_kind(self, function: ast.AST, name: str) -> Kind | None:
        """The kind a transformation or a lax primitive gives parameter `name` of `function` directly (joined over
        every such use), or None when no transformation wraps `function`."""
        self._solve()
        kinds = self._seeded.get(function)
        return None if kinds is None else kinds.get(name, Kind.UNKNOWN)

    def traced_call_sites(self, function: ast.AST) -> list[ast.Call]:
        """The calls in traced code of this module that reach `function` by its name."""
        self._solve()
        return [
            call
            for caller in self._traced
            for call in self._calls_in.get(caller, ())
            if function in set(self._definitions_of_callee(call))
        ]

    # ---- collection ---------------------------------------------------------------------------------------------

    def _owner(self, node: ast.AST) -> tuple[ast.AST | None, bool]:
        """The innermost function above `node` (not `node` itself), and whether a class lies between (or, at module
        level, anywhere above)."""
        parents = self.binder.parents
        parent = parents.get(node)
        in_class = False
        while parent is not None:
            kind = type(parent)
            if kind in FUNCTIONS:
                return parent, in_class
            if kind is ast.ClassDef:
                in_class = True
            parent = parents.get(parent)
        return None, in_class

    def _collect(self) -> None:
        binder = self.binder
        self._functions: dict[ast.AST, _Function] = {}
        self._nested: dict[ast.AST, list[ast.AST]] = {}
        self._calls_in: dict[ast.AST, list[ast.Call]] = {}
        self._host_only: set[ast.AST] = set()
        self._partial_keywords: dict[ast.AST, set[str]] = {}
        self._static_attrs: dict[ast.AST, dict[str, frozenset[str]]] = {}
        self._args: dict[ast.Call, list[Arg]] = {}
        self._order: dict[ast.AST, tuple] = {}  # a def's or call's place in a walk of the source in order
        functions = [node for kind in FUNCTIONS for node in binder.nodes_of(kind)]  # one type at a time: indexed
        for node in sorted(functions, key=self._place):
            owner, _ = self._owner(node)
            info = self._functions[node] = _Function(node, self._functions.get(owner) if owner is not None else None)
            if owner is not None:
                self._nested.setdefault(owner, []).append(node)
        module: list[tuple[str, object]] = []

        def bind(at: ast.AST, name: str, source) -> None:
            owner, in_class = self._owner(at)
            if owner is None:
                if not in_class:
                    module.append((name, source))
                return
            info = self._functions[owner]
            info.bindings.append((name, source))
            info.bound.add(name)

        for kind in _BINDING_STATEMENTS:  # their order does not count: each name's kind is a join
            for node in binder.nodes_of(kind):
                self._bind_statement(node, bind)
        self._module_bindings = module
        calls = sorted(binder.calls, key=self._place)
        self._all_calls = calls
        for call in calls:
            owner, _ = self._owner(call)
            if owner is not None:
                self._calls_in.setdefault(owner, []).append(call)
            if binder.callee(call) in HOST_CALLBACKS and (call.args or call.keywords):
                first = self._call_args(call)[0].value
                for function, _ in self._functions_in(first, before=self._place(call)):
                    self._host_only.add(function)
                if type(first) is ast.Lambda:
                    self._host_only.add(first)

    def _place(self, node: ast.AST) -> tuple:
        """Where a walk of the code in source order meets `node`: a def at its first decorator, before what it holds;
        of nodes starting at one place, the outer first."""
        found = self._order.get(node)
        if found is None:
            at = node.decorator_list[0] if isinstance(node, _DEFS) and node.decorator_list else node
            found = self._order[node] = (at.lineno, at.col_offset, 0 if at is not node else 1,
                                         -node.end_lineno, -node.end_col_offset)
        return found

    def _bind_statement(self, node: ast.AST, bind) -> None:
        kind = type(node)
        if kind is ast.Assign:
            for target in node.targets:
                for name in target_names(target):
                    bind(node, name, node.value)
        elif kind is ast.AnnAssign:
            if node.value is not None:
                for name in target_names(node.target):
                    bind(node, name, node.value)
        elif kind is ast.AugAssign or kind is ast.NamedExpr:
            for name in target_names(node.target):
                bind(node, name, node.value)
        elif kind is ast.For or kind is ast.AsyncFor:
            self._bind_for(node, bind)
        elif kind is ast.withitem:
            if node.optional_vars is not None:
                for name in target_names(node.optional_vars):
                    bind(node, name, Kind.UNKNOWN)
        elif kind is ast.ExceptHandler:
            if node.name is not None:
                bind(node, node.name, Kind.STATIC)
        elif kind is ast.Import:
            for alias in node.names:
                bind(node, alias.asname or alias.name.split(".")[0], Kind.STATIC)
        elif kind is ast.ImportFrom:
            for alias in node.names:
                if alias.name != "*":
                    bind(node, alias.asname or alias.name, Kind.STATIC)
        elif kind is ast.Global or kind is ast.Nonlocal:
            for name in node.names:
                bind(node, name, Kind.UNKNOWN)
        else:  # a def or a class binds its name where it stands
            bind(node, node.name, Kind.STATIC)

    def _bind_for(self, node: ast.For | ast.AsyncFor, bind) -> None:
        iterable, target = node.iter, node.target
        callee = iterable.func.id if type(iterable) is ast.Call and type(iterable.func) is ast.Name else None
        if callee is not None and type(target) is ast.Tuple:
            args = self._call_args(iterable)
            if callee == "enumerate" and args and len(target.elts) == 2:
                for name in target_names(target.elts[0]):
                    bind(node, name, Kind.STATIC)
                for name in target_names(target.elts[1]):
                    bind(node, name, args[0].value)
                return
            if callee == "zip" and len(target.elts) == len(args):
                for element, arg in zip(target.elts, args):
                    for name in target_names(element):
                        bind(node, name, arg.value)
                return
        for name in target_names(target):
            bind(node, name, iterable)

    def _call_args(self, call: ast.Call) -> list[Arg]:
        found = self._args.get(call)
        if found is None:
            found = self._args[call] = call_args(call)
        return found

    # ---- solving ------------------------------------------------------------------------------------------------

    def _solve(self) -> None:
        if self._solved:
            return
        self._solved = True
        self._traced: set[ast.AST] = set()
        self._seeded_by: dict[ast.AST, set[str]] = {}
        self._collect()
        self._module_env: dict[str, Kind] = {}  # what the module's own bindings read while they are solved
        self._module_env = self._solve_env(None, self._module_bindings, {})
        seeds = self._seed_traced()
        self._seeded: dict[ast.AST, dict[str, Kind]] = {}
        for function, kinds in seeds:
            self._mark(function, kinds)
            if function in self._functions:
                joined = self._seeded.setdefault(function, {})
                for name in self._functions[function].params:
                    joined[name] = max(joined.get(name, Kind.STATIC), kinds.get(name, Kind.UNKNOWN))
        for _ in range(20):  # fixed point: calls from traced code trace callees and refine their parameters
            changed = False
            for function in list(self._traced):
                info = self._functions[function]
                info.env = self._solve_env(info, info.bindings, info.param_kinds)
            for function in list(self._traced):
                changed |= self._propagate_from(self._functions[function])
            if not changed:
                break
        for function in self._traced:
            info = self._functions[function]
            info.env = self._solve_env(info, info.bindings, info.param_kinds)

    def _mark(self, function: ast.AST, kinds: dict[str, Kind]) -> bool:
        """Record `function` as traced with parameter kinds joined into what is known; True if anything changed."""
        info = self._functions.get(function)
        if info is None:
            return False
        changed = function not in self._traced
        self._traced.add(function)
        for name in info.params:
            old = info.param_kinds.get(name)
            new = kinds.get(name, Kind.UNKNOWN)
            new = new if old is None else max(old, new)
            if new != old:
                info.param_kinds[name] = new
                changed = True
        return changed

    def _seed_traced(self) -> list[tuple[ast.AST, dict[str, Kind]]]:
        seeds: list[tuple[ast.AST, dict[str, Kind]]] = []
        for node, info in self._functions.items():
            if isinstance(node, _DEFS):
                for decorator in node.decorator_list:
                    transform = self._transform_of(decorator)
                    if transform is not None:
                        name, call = transform
                        seeds.append((node, self._param_kinds_for(name, call, info, bound_positional=0)))
                        self._seeded_by.setdefault(node, set()).add(name)
        for call in self._all_calls:
            callee = self.binder.callee(call)
            if callee is None:
                continue
            args = self._call_args(call)
            if callee in TRANSFORMS and args:
                for function, bound in self._functions_in(args[0].value):
                    seeds.append((function, self._param_kinds_for(callee, call, self._functions[function], bound)))
                    self._seeded_by.setdefault(function, set()).add(callee)
            elif callee in LAX_BODIES:
                positions, keywords = LAX_BODIES[callee]
                for index, arg in enumerate(args):
                    if (arg.keyword is None and index in positions) or (arg.keyword is not None and arg.keyword in keywords):
                        for function, _ in self._functions_in(arg.value):
                            seeds.append((function, {p: Kind.TRACED for p in self._functions[function].params}))
                            self._seeded_by.setdefault(function, set()).add(callee)
        seeds.extend(self._project_seeds())
        return seeds

    def _project_seeds(self) -> list[tuple[ast.AST, dict[str, Kind]]]:
        """The functions of this module that other modules trace, or the libraries' conventions do (the project
        index), with the kinds the project gives their parameters; and the static attributes of their parameters."""
        facts = self._project
        if not facts:
            return []
        defs = self.binder.defs
        seeds = []
        for qualname, (transforms, kinds) in facts.traced.items():
            node = defs.get(qualname)
            if node is None or node not in self._functions:
                continue
            seeds.append((node, {p: Kind(k) for p, k in kinds.items()}))
            self._seeded_by.setdefault(node, set()).update(transforms)
        for qualname, attrs in facts.static_attrs.items():
            node = defs.get(qualname)
            if node is not None and node in self._functions:
                self._static_attrs[node] = {p: frozenset(a) for p, a in attrs.items()}
        return seeds

    def _static_attribute(self, expr: ast.Attribute | ast.Name, info: _Function | None) -> bool:
        """Whether `expr` (`self.features`, `config.num_layers`, or a parameter itself) is static by the project's
        facts: an attribute that is a hyperparameter of a module, a field of a class registered static."""
        if type(expr) is ast.Name:
            name = expr.id
        elif type(expr.value) is ast.Name:
            name = expr.value.id
        else:
            return False
        scope = info
        while scope is not None:
            if name in scope.params:
                if name in scope.bound:
                    return False  # rebound: not the parameter's value everywhere
                attrs = self._static_attrs.get(scope.node, {}).get(name, frozenset())
                return "*" in attrs or (type(expr) is ast.Attribute and expr.attr in attrs)
            if name in scope.bound:
                return False
            scope = scope.parent
        return False

    def _transform_of(self, decorator: ast.expr) -> tuple[str, ast.Call | None] | None:
        """`@jax.jit`, `@jax.jit(static_argnums=1)`, `@partial(jax.jit, ...)` → ("jax.jit", call with options)."""
        names = self.binder
        name = names.qualified(decorator)
        if name in TRANSFORMS:
            return name, None
        if type(decorator) is ast.Call:
            callee = names.callee(decorator)
            args = self._call_args(decorator)
            if callee in TRANSFORMS and not any(a.keyword is None for a in args):
                return callee, decorator
            if callee in _PARTIAL and args:
                inner = names.qualified(args[0].value)
                if inner in TRANSFORMS:
                    return inner, decorator
        return None

    def _functions_in(self, expr: ast.expr, before: tuple | None = None) -> Iterator[tuple[ast.AST, int]]:
        """Functions an argument expression denotes, with how many leading parameters `partial` binds; `before`:
        only the defs met before that place in the source (what a walk in order has seen)."""
        kind = type(expr)
        if kind is ast.Lambda:
            yield expr, 0
        elif kind is ast.Name:
            for definition in self._definitions(expr):
                if before is None or self._place(definition) < before:
                    yield definition, 0
        elif kind is ast.List or kind is ast.Tuple:
            for element in expr.elts:
                yield from self._functions_in(_unstarred(element), before)
        elif kind is ast.Call:
            callee = self.binder.callee(expr)
            args = self._call_args(expr)
            if callee in _PARTIAL and args:
                bound = sum(1 for a in args[1:] if a.keyword is None and not a.star)
                keywords = {a.keyword for a in args[1:] if a.keyword is not None}
                for function, inner in self._functions_in(args[0].value, before):
                    if keywords:  # `partial(f, beam_size=n)`: a constant of what the transformation traces
                        self._partial_keywords.setdefault(function, set()).update(keywords)
                    yield function, inner + bound
            elif callee in TRANSFORMS and args:
                yield from self._functions_in(args[0].value, before)

    def _definitions(self, name: ast.Name) -> Iterator[ast.AST]:
        scope = self.binder.scope_of.get(name)
        if scope is None:
            return
        for binding in scope.resolve(name.id):
            if isinstance(binding.node, _DEFS) and binding.node in self._functions:
                yield binding.node

    def _param_kinds_for(self, transform: str, call: ast.Call | None, info: _Function, bound_positional: int) -> dict[str, Kind]:
        """Parameter kinds implied by one transformation and its options."""
        args = self._call_args(call) if call is not None else []
        options = {a.keyword: a.value for a in args if a.keyword is not None}
        if "in_axes" not in options and transform in VMAP_LIKE:
            positional = _positional_in_axes(args)
            if positional is not None:
                options["in_axes"] = positional
        written = {key: _option_literal(key, value) for key, value in options.items() if key in SEEDING_OPTIONS}
        method = bool(info.params) and isinstance(info.node, _DEFS)
        return parameter_kinds(info.params, transform, written, bound_positional,
                               fixed=self._partial_keywords.get(info.node, ()), method=method)

    def _propagate_from(self, info: _Function) -> bool:
        """Calls inside a traced function trace the same-module functions they reach; nested functions that the
        traced body uses are traced too (unless handed to a host callback)."""
        changed = False
        for call in self._calls_in.get(info.node, ()):
            for function in self._definitions_of_callee(call):
                callee = self._functions[function]
                kinds = _bind_arguments(callee.params, self._call_args(call), lambda e: self._kind(e, info))
                changed |= self._mark(function, kinds)
        for nested in self._nested.get(info.node, ()):
            if nested in self._host_only:
                continue
            changed |= self._mark(nested, {})
        return changed

    def _definitions_of_callee(self, call: ast.Call) -> Iterator[ast.AST]:
        if type(call.func) is ast.Name and call.func.id not in _BUILTINS:
            yield from self._definitions(call.func)

    # ---- kinds of expressions -----------------------------------------------------------------------------------

    def _solve_env(self, info: _Function | None, bindings, params: dict[str, Kind]) -> dict[str, Kind]:
        env: dict[str, Kind] = dict(params)
        for name in {name for name, _ in bindings} - set(params):
            env[name] = Kind.STATIC
        for _ in range(50):
            changed = False
            for name, source in bindings:
                value = source if isinstance(source, Kind) else self._kind(source, info, env)
                new = max(env[name], value)
                if new != env[name]:
                    env[name] = new
                    changed = True
            if not changed:
                break
        return env

    def _lookup(self, name: str, info: _Function | None, env: dict[str, Kind] | None) -> Kind:
        if env is not None and name in env:
            return env[name]
        scope = info
        while scope is not None:
            if name in scope.env:
                return scope.env[name]
            if name in scope.params:
                return scope.param_kinds.get(name, Kind.UNKNOWN)
            if name in scope.bound:
                return Kind.UNKNOWN  # a function not analysed as traced: its locals are unknown
            scope = scope.parent
        if name in self._module_env:
            return self._module_env[name]
        if name in _BUILTINS:
            return Kind.STATIC
        return Kind.UNKNOWN

    def _kind(self, expr: ast.AST, info: _Function | None, env: dict[str, Kind] | None = None) -> Kind:
        kind = lambda e: self._kind(e, info, env)  # noqa: E731
        what = type(expr)
        if what is ast.Name:
            if self._static_attrs and self._static_attribute(expr, info):
                return Kind.STATIC
            return self._lookup(expr.id, info, env)
        if what is ast.Constant:
            return Kind.STATIC
        if what is ast.Attribute:
            if expr.attr in STATIC_ATTRIBUTES:
                return Kind.STATIC
            if self.binder.qualified(expr) is not None:
                return Kind.STATIC  # a module attribute such as jnp.float32 or jax.numpy.pi
            if self._static_attrs and self._static_attribute(expr, info):
                return Kind.STATIC
            return kind(expr.value)
        if what is ast.Call:
            return self._call_kind(expr, kind)
        if what is ast.Subscript:
            parts = [kind(expr.value)]
            index = expr.slice
            for element in index.elts if type(index) is ast.Tuple else (index,):
                if type(element) is ast.Slice:
                    parts.extend(kind(x) for x in (element.lower, element.upper, element.step) if x)
                else:
                    parts.append(kind(_unstarred(element)))
            return join(parts)
        if what is ast.BinOp:
            return join([kind(expr.left), kind(expr.right)])
        if what is ast.UnaryOp:
            return kind(expr.operand)
        if what is ast.BoolOp:
            return join(kind(v) for v in expr.values)
        if what is ast.Compare:
            if all(type(op) in (ast.Is, ast.IsNot) for op in expr.ops):
                return Kind.STATIC  # identity is a Python bool, of tracers too (`m.left is m.right`)
            return join([kind(expr.left), *(kind(c) for c in expr.comparators)])
        if what is ast.IfExp:
            return join([kind(expr.test), kind(expr.body), kind(expr.orelse)])
        if what is ast.Tuple or what is ast.List or what is ast.Set:
            return join(kind(_unstarred(e)) for e in expr.elts)
        if what is ast.Dict:
            return join([*(kind(k) for k in expr.keys if k is not None), *(kind(v) for v in expr.values)])
        if what is ast.JoinedStr:
            return join(kind(p.value) for p in expr.values if type(p) is ast.FormattedValue)
        if what is ast.Lambda:
            return Kind.STATIC
        if what is ast.NamedExpr:
            return kind(expr.value)
        if what in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            return self._comprehension_kind(expr, info, env)
        return Kind.UNKNOWN

    def _call_kind(self, call: ast.Call, kind) -> Kind:
        callee = self.binder.callee(call)
        func = call.func
        if callee is None and type(func) is ast.Name and func.id in _BUILTINS:
            if self._lookup(func.id, None, None) is Kind.STATIC and func.id in STATIC_CALLS:
                return Kind.STATIC
            callee = func.id
        if callee in STATIC_CALLS:
            return Kind.STATIC
        args = self._call_args(call)
        arguments = join(kind(a.value) for a in args)
        if callee is not None and callee.startswith(ARRAY_NAMESPACES):
            return Kind.TRACED  # staged into the computation, even from static arguments
        if callee in TREE_STRUCTURES:
            return Kind.STATIC
        if callee in TREE_MAPS and args:
            return self._tree_map_kind(args, kind)
        if type(func) is ast.Attribute:
            return join([kind(func.value), arguments])  # a method: x.sum(), params.get("w")
        if callee in _BUILTINS:
            return arguments
        return Kind.TRACED if arguments is Kind.TRACED else Kind.UNKNOWN

    def _tree_map_kind(self, args: list[Arg], kind) -> Kind:
        """A tree map returns what its function returns: traced leaves mapped by `_is_none` are Python bools."""
        mapped = args[0].value
        trees = join(kind(a.value) for a in args[1:] if a.keyword is None)
        qualified = self.binder.qualified(mapped)
        if qualified is not None and qualified.startswith(ARRAY_NAMESPACES):
            return trees
        if type(mapped) is ast.Lambda and mapped in self._functions:
            info = self._functions[mapped]
            return self._kind(mapped.body, info, {p: trees for p in info.params})
        return Kind.UNKNOWN

    def _comprehension_kind(self, expr, info, env) -> Kind:
        inner = dict(env or {})
        parts = []
        for clause in expr.generators:
            iter_kind = self._kind(clause.iter, info, inner)
            parts.append(iter_kind)
            for name in target_names(clause.target):
                inner[name] = iter_kind
            parts.extend(self._kind(test, info, inner) for test in clause.ifs)
        if type(expr) is ast.DictComp:
            parts.extend([self._kind(expr.key, info, inner), self._kind(expr.value, info, inner)])
        else:
            parts.append(self._kind(expr.elt, info, inner))
        return join(parts)


def _bind_arguments(params: list[str], args: list[Arg], kind_of) -> dict[str, Kind]:
    """Parameter kinds from one call site: positional by order, keywords by name, the rest unknown."""
    kinds: dict[str, Kind] = {}
    position = 0
    for arg in args:
        if arg.star:
            return {p: max(kinds.get(p, Kind.STATIC), kind_of(arg.value)) for p in params} | {
                p: Kind.UNKNOWN for p in params if p not in kinds
            }
        if arg.keyword is not None:
            if arg.keyword in params:
                kinds[arg.keyword] = kind_of(arg.value)
        elif position < len(params):
            kinds[params[position]] = kind_of(arg.value)
            position += 1
    return kinds


def _positional_in_axes(args: list[Arg]) -> ast.expr | None:
    """The `in_axes` of `jax.vmap(f, (0, None))`, given positionally after the function."""
    positional = [a for a in args if a.keyword is None and not a.star]
    return positional[1].value if len(positional) >= 2 else None


# What a transformation's options say of the parameters of what it traces, decoded to literals by the caller
# (`_option_literal` here, the project index from its summaries), so that both read one rule (`parameter_kinds`).
SEEDING_OPTIONS = frozenset({"static_argnums", "static_broadcasted_argnums", "static_argnames", "argnums", "in_axes"})
MAPPED, UNMAPPED, UNSURE = "mapped", "unmapped", "unsure"  # an `in_axes` entry: an int, None, anything else


def parameter_kinds(
    params: list[str], transform: str, options: dict[str, list | str | None], bound: int = 0, *,
    fixed: Iterable[str] = (), method: bool = False,
) -> dict[str, Kind]:
    """The kind of each parameter of a function that `transform` traces, from the transformation's literal
    options: `static_argnums`/`static_broadcasted_argnums`/`argnums` a list of ints, `static_argnames` a list of
    names, each None where the option is not a literal (then nothing is known); `in_axes` a list of
    MAPPED/UNMAPPED/UNSURE, one per positional parameter, or one of them for all. `bound`: the leading positional parameters a
    `functools.partial` fixed, and `fixed` the keywords it fixed (constants of the traced function); `method`: the
    first parameter is `self`/`cls` of a def (neither static nor traced)."""
    constants = {p for p in [*params[:bound], *fixed] if p in params}  # bound by functools.partial

    def nothing_known() -> dict[str, Kind]:
        return {p: Kind.STATIC if p in constants else Kind.UNKNOWN for p in params}

    kinds = {p: Kind.STATIC if p in constants else Kind.TRACED for p in params}
    if method and params and params[0] in ("self", "cls"):
        kinds[params[0]] = Kind.UNKNOWN
    if transform in FILTERED:
        return nothing_known()
    if transform in JIT_LIKE:
        for key in ("static_argnums", "static_broadcasted_argnums", "static_argnames"):
            if key not in options:
                continue
            if options[key] is None:
                return nothing_known()
            for n in options[key]:
                if type(n) is int:
                    index = bound + n if n >= 0 else len(params) + n
                    n = params[index] if 0 <= index < len(params) else None
                if n in kinds:
                    kinds[n] = Kind.STATIC
    elif transform in GRAD_LIKE:
        argnums = options.get("argnums", [0])
        if argnums is None:
            return nothing_known()
        for index, p in enumerate(params[bound:]):
            if index not in argnums:
                kinds[p] = Kind.UNKNOWN  # concrete unless the caller is itself traced
    elif transform in VMAP_LIKE and "in_axes" in options:
        axes = options["in_axes"]
        free = params[bound:]
        for p, entry in zip(free, [axes] * len(free) if type(axes) is str else axes):
            if entry != MAPPED and kinds[p] is Kind.TRACED:
                kinds[p] = Kind.UNKNOWN  # not mapped, or maybe not: what the caller passes
    return kinds


def _option_literal(key: str, value: ast.expr) -> list | str | None:
    """A seeding option's value as `parameter_kinds` reads it (None: not a literal)."""
    if key == "in_axes":
        return [_axis(e) for e in value.elts] if type(value) in (ast.Tuple, ast.List) else _axis(value)
    return literals(value, (str, bytes) if key == "static_argnames" else (int,))


def _axis(entry: ast.expr) -> str:
    if type(entry) is ast.Constant and entry.value is None:
        return UNMAPPED
    if type(entry) is ast.Constant and type(entry.value) is int:
        return MAPPED
    return UNSURE


def literals(expr: ast.expr, kinds: tuple[type, ...]) -> list | None:
    """The literal values `expr` writes, flattened: one constant of `kinds` (an int also with `-`), or a tuple or
    list of them; None for anything else (`static_argnums=(0, -1)`, `static_argnames="n"`)."""
    if type(expr) is ast.Constant and type(expr.value) in kinds:
        return [expr.value]
    if int in kinds and type(expr) is ast.UnaryOp and type(expr.op) is ast.USub and type(expr.operand) is ast.Constant \
            and type(expr.operand.value) is int:
        return [-expr.operand.value]
    if type(expr) in (ast.Tuple, ast.List):
        values: list = []
        for element in expr.elts:
            inner = literals(_unstarred(element), kinds)
            if inner is None:
                return None
            values.extend(inner)
        return values
    return None
