"""Which functions run under JAX tracing, and which values inside them are traced.

A function is traced when a JAX transformation wraps it (`@jax.jit`, `partial(jax.jit, ...)`, `jax.vmap(f)`,
`eqx.filter_jit`, ...), when it is a body passed to lax control flow (`lax.scan(step, ...)`), when a traced
function of the same module calls it, or when it is defined inside a traced function and used there.

Values are classified per function into three kinds, joined by `max`:
- STATIC: known at trace time (literals, `.shape`/`.ndim`/`.dtype`/`.size`, `len(...)`, `is None`, static
  arguments, module constants, indices of a static `range`);
- TRACED: depends on a traced argument or on a JAX computation;
- UNKNOWN: anything else. Codemods treat UNKNOWN as "do not rewrite".
The analysis is flow-insensitive: a name's kind is the join over all its bindings in the function.
"""

from __future__ import annotations

import builtins
import enum
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Union

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.syntax import code_children, param_names, target_names
from jaxfix.facts.knowledge.jax import (  # noqa: F401 (read from here by other analyses until they import knowledge)
    ARRAY_NAMESPACES, FUNCTION_MAKERS, HOST_CALLBACKS, STATIC_ATTRIBUTES, STATIC_CALLS, TREE_MAPS, TREE_STRUCTURES,
)
from jaxfix.facts.knowledge.tables import (  # noqa: F401
    COMPILED_CALLABLES, COMPILING, LAX_BODIES, REVERSE_MODE, STAGING, TRANSFORMS,
    FILTERED as _FILTERED, GRAD_LIKE as _GRAD_LIKE, JIT_LIKE as _JIT_LIKE, VMAP_LIKE as _VMAP_LIKE,
)
from jaxfix.facts.model import ModuleModel


class Kind(enum.IntEnum):
    STATIC = 0
    UNKNOWN = 1
    TRACED = 2


def join(kinds: Iterable[Kind]) -> Kind:
    return max(kinds, default=Kind.STATIC)


FunctionNode = Union[cst.FunctionDef, cst.Lambda]

# Why a loop rule leaves a loop alone in a function that no compiling transformation reaches.
NOT_COMPILED = (
    "no jax.jit reaches this function (only eager jax.vmap/jax.grad), where a lax loop is compiled again on every "
    "call; jit its caller"
)
_PARTIAL = {"functools.partial"}
_BUILTINS = frozenset(dir(builtins))


@dataclass
class _Function:
    node: FunctionNode
    parent: "_Function | None"
    params: list[str] = field(default_factory=list)
    bindings: list[tuple[str, object]] = field(default_factory=list)  # (name, expression or Kind)
    param_kinds: dict[str, Kind] = field(default_factory=dict)
    env: dict[str, Kind] = field(default_factory=dict)


class TracedAnalysis:
    def __init__(self, context: ModuleModel) -> None:
        self._context = context
        self._names = context.names
        self._scopes = context.wrapper.resolve(ScopeProvider)
        self._functions: dict[FunctionNode, _Function] = {}
        self._module_env: dict[str, Kind] = {}
        self._traced: set[FunctionNode] = set()
        self._seeded_by: dict[FunctionNode, set[str]] = {}  # function -> the transformations that wrap it
        self._via: dict[FunctionNode, frozenset[str]] | None = None
        self._project = context.project  # what other modules and library conventions say (project.py)
        self._static_attrs: dict[FunctionNode, dict[str, frozenset[str]]] = {}
        self._partial_keywords: dict[FunctionNode, set[str]] = {}  # parameters some `partial` binds by keyword
        self._collect()
        self._solve()

    # ---- queries -------------------------------------------------------------------------------------------

    def is_traced(self, function: FunctionNode) -> bool:
        return function in self._traced

    def enclosing_function(self, node: cst.CSTNode) -> FunctionNode | None:
        """The innermost function or lambda that `node` is inside (its body, decorators, defaults...), or None.
        The collector records it for every node of the module but whitespace and punctuation (`metadata.TRIVIA`, two thirds of the nodes),
        whose answer comes from their parents'."""
        try:
            return self._enclosing[node]
        except KeyError:
            pass
        parents = self._context.parents
        while (parent := parents.get(node)) is not None:  # None: not a node of this module
            if isinstance(parent, (cst.FunctionDef, cst.Lambda)):
                return parent
            if parent in self._enclosing:
                return self._enclosing[parent]
            node = parent
        return None

    def in_traced_code(self, node: cst.CSTNode) -> bool:
        """Whether `node` runs while JAX traces: inside a traced function's body (not its decorators)."""
        function = self.enclosing_function(node)
        return function is not None and function in self._traced

    def guarded(self, node: cst.CSTNode) -> bool:
        """Whether `node` sits in the body of a `try` (in its own function) that catches the error a traced value
        raises in a Python test (`except jax.errors.ConcretizationTypeError`, TracerBoolConversionError, any
        `jax.errors` class, Exception or a bare except): code written to run under tracing and eagerly alike."""
        parents = self._context.parents
        child, parent = node, parents.get(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda)):
            if isinstance(parent, (cst.Try, getattr(cst, "TryStar", cst.Try))) and child is parent.body:
                if any(self._catches_tracer_errors(h.type) for h in parent.handlers):
                    return True
            child, parent = parent, parents.get(parent)
        return False

    def _catches_tracer_errors(self, kind: cst.BaseExpression | None) -> bool:
        if kind is None:
            return True
        if isinstance(kind, cst.Tuple):
            return any(self._catches_tracer_errors(e.value) for e in kind.elements)
        qualified = self._names.qualified(kind) or (kind.value if isinstance(kind, cst.Name) else "")
        return qualified.startswith("jax.errors.") or qualified in (
            "Exception", "BaseException", "TypeError", "jax.core.ConcretizationTypeError"
        )

    def param_kind(self, function: FunctionNode, name: str) -> Kind:
        return self._functions[function].param_kinds.get(name, Kind.UNKNOWN)

    def kind(
        self, expr: cst.BaseExpression, *, within: FunctionNode | None = None, assume: dict[str, Kind] | None = None
    ) -> Kind:
        """The kind of an expression where it stands (inside its enclosing function, or `within` for an
        expression built by a codemod), optionally as if the names in `assume` had those kinds (a loop
        codemod asks what a body computes once its carried variables are traced)."""
        function = within if within is not None else self.enclosing_function(expr)
        info = self._functions.get(function) if function is not None else None
        env = {**info.env, **assume} if assume and info is not None else None
        return self._kind(expr, info, env)

    def traced_functions(self) -> Iterator[FunctionNode]:
        return iter(self._traced)

    def transforms(self, function: FunctionNode) -> frozenset[str]:
        """The transformations (qualified names; `jax.lax.scan` and the like for bodies) through which this
        module traces `function`: those that wrap it, or wrap a traced function that calls it or nests it.
        Empty for functions that are not traced."""
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

    def staged(self, function: FunctionNode) -> bool:
        """Whether some transformation stages `function` (jit, vmap, a lax body, ...), so that a Python
        `if`/`while` on one of its traced values fails there; False when only jax.grad-like transformations
        reach it (they run it eagerly)."""
        return any(t in STAGING or t in LAX_BODIES for t in self.transforms(function))

    def compiled(self, function: FunctionNode) -> bool:
        """Whether `function` runs inside one compiled program (jit, pmap, shard_map, a lax body), so that a lax
        loop written in it compiles once. Under eager jax.vmap or jax.grad alone each call dispatches the loop
        primitive with a freshly traced body and compiles it again (measured: 10 compilations in 10 calls, 4.5x
        slower than the Python loop), so a loop rewrite pays only where this holds."""
        return any(t in COMPILING or t in LAX_BODIES for t in self.transforms(function))

    def seeded_kind(self, function: FunctionNode, name: str) -> Kind | None:
        """The kind a transformation or a lax primitive gives parameter `name` of `function` directly (joined over
        every such use), or None when no transformation wraps `function` (it is traced through calls, if at all)."""
        kinds = self._seeded.get(function)
        return None if kinds is None else kinds.get(name, Kind.UNKNOWN)

    def traced_call_sites(self, function: FunctionNode) -> list[cst.Call]:
        """The calls in traced code of this module that reach `function` by its name (how its parameters get
        their kinds when no transformation wraps it)."""
        return [
            call
            for caller in self._traced
            for call in self._calls_in.get(caller, ())
            if function in set(self._definitions_of_callee(call))
        ]

    # ---- collection ----------------------------------------------------------------------------------------

    def _collect(self) -> None:
        collector = _BindingCollector(self)
        collector.collect(self._context.module)
        self._module_bindings = collector.module_bindings

    def _register(self, node: FunctionNode, parent: _Function | None) -> _Function:
        info = _Function(node, parent, params=param_names(node.params))
        self._functions[node] = info
        return info

    # ---- solving -------------------------------------------------------------------------------------------

    def _solve(self) -> None:
        self._module_env = self._solve_env(None, self._module_bindings, {})
        seeds = self._seed_traced()
        self._seeded: dict[FunctionNode, dict[str, Kind]] = {}
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

    def _mark(self, function: FunctionNode, kinds: dict[str, Kind]) -> bool:
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

    def _seed_traced(self) -> list[tuple[FunctionNode, dict[str, Kind]]]:
        seeds: list[tuple[FunctionNode, dict[str, Kind]]] = []
        for node, info in self._functions.items():
            if isinstance(node, cst.FunctionDef):
                for decorator in node.decorators:
                    transform = self._transform_of(decorator.decorator)
                    if transform is not None:
                        name, call = transform
                        seeds.append((node, self._param_kinds_for(name, call, info, bound_positional=0)))
                        self._seeded_by.setdefault(node, set()).add(name)
        for call in self._all_calls:
            callee = self._names.callee(call)
            if callee is None:
                continue
            if callee in TRANSFORMS and call.args:
                for function, bound in self._functions_in(call.args[0].value):
                    seeds.append((function, self._param_kinds_for(callee, call, self._functions[function], bound)))
                    self._seeded_by.setdefault(function, set()).add(callee)
            elif callee in _PARTIAL and call.args and self._names.qualified(call.args[0].value) in TRANSFORMS:
                pass  # partial(jax.jit, ...) used as a decorator is handled with decorators
            elif callee in LAX_BODIES:
                positions, keywords = LAX_BODIES[callee]
                for index, arg in enumerate(call.args):
                    is_body = (arg.keyword is None and index in positions) or (
                        arg.keyword is not None and arg.keyword.value in keywords
                    )
                    if is_body:
                        for function, _ in self._functions_in(arg.value):
                            seeds.append((function, {p: Kind.TRACED for p in self._functions[function].params}))
                            self._seeded_by.setdefault(function, set()).add(callee)
        seeds.extend(self._project_seeds())
        return seeds

    def _project_seeds(self) -> list[tuple[FunctionNode, dict[str, Kind]]]:
        """The functions of this module that other modules trace, or the libraries' conventions do (project.py),
        with the kinds the project gives their parameters; and the static attributes of their parameters."""
        facts = self._project
        if not facts:
            return []
        defs = self._context.qualified_defs
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

    def _static_attribute(self, expr: cst.Attribute | cst.Name, info: _Function | None) -> bool:
        """Whether `expr` (`self.features`, `config.num_layers`, or a parameter itself) is static by the project's
        facts: an attribute that is a hyperparameter of a module, a field of a class registered static."""
        name = expr.value if isinstance(expr, cst.Name) else expr.value.value if isinstance(expr.value, cst.Name) else None
        if name is None:
            return False
        scope = info
        while scope is not None:
            if name in scope.params:
                if any(n == name for n, _ in scope.bindings):
                    return False  # rebound: not the parameter's value everywhere
                attrs = self._static_attrs.get(scope.node, {}).get(name, frozenset())
                return "*" in attrs or (isinstance(expr, cst.Attribute) and expr.attr.value in attrs)
            if any(n == name for n, _ in scope.bindings):
                return False
            scope = scope.parent
        return False

    def _transform_of(self, decorator: cst.BaseExpression) -> tuple[str, cst.Call | None] | None:
        """`@jax.jit`, `@jax.jit(static_argnums=1)`, `@partial(jax.jit, ...)` → ("jax.jit", call with options)."""
        name = self._names.qualified(decorator)
        if name in TRANSFORMS:
            return name, None
        if isinstance(decorator, cst.Call):
            callee = self._names.callee(decorator)
            if callee in TRANSFORMS and not any(a.keyword is None for a in decorator.args):
                return callee, decorator
            if callee in _PARTIAL and decorator.args:
                inner = self._names.qualified(decorator.args[0].value)
                if inner in TRANSFORMS:
                    return inner, decorator
        return None

    def _functions_in(self, expr: cst.BaseExpression) -> Iterator[tuple[FunctionNode, int]]:
        """Functions an argument expression denotes, with how many leading parameters `partial` binds."""
        if isinstance(expr, cst.Lambda):
            yield expr, 0
        elif isinstance(expr, cst.Name):
            for definition in self._definitions(expr):
                yield definition, 0
        elif isinstance(expr, (cst.List, cst.Tuple)):
            for element in expr.elements:
                yield from self._functions_in(element.value)
        elif isinstance(expr, cst.Call) and self._names.callee(expr) in _PARTIAL and expr.args:
            bound = sum(1 for a in expr.args[1:] if a.keyword is None and not a.star)
            keywords = {a.keyword.value for a in expr.args[1:] if a.keyword is not None}
            for function, inner in self._functions_in(expr.args[0].value):
                if keywords:  # `partial(f, beam_size=n)`: a constant of what the transformation traces
                    self._partial_keywords.setdefault(function, set()).update(keywords)
                yield function, inner + bound
        elif isinstance(expr, cst.Call) and self._names.callee(expr) in TRANSFORMS and expr.args:
            yield from self._functions_in(expr.args[0].value)

    def _definitions(self, name: cst.Name) -> Iterator[cst.FunctionDef]:
        scope = self._scopes.get(name)
        if scope is None:
            return
        for assignment in scope[name.value]:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.FunctionDef) and node in self._functions:
                yield node

    def _param_kinds_for(self, transform: str, call: cst.Call | None, info: _Function, bound_positional: int) -> dict[str, Kind]:
        """Parameter kinds implied by one transformation and its options."""
        params = info.params
        kinds = {p: Kind.TRACED for p in params}
        for p in params[:bound_positional]:
            kinds[p] = Kind.STATIC  # bound by functools.partial: a constant of the traced function
        for p in self._partial_keywords.get(info.node, ()):
            if p in kinds:
                kinds[p] = Kind.STATIC
        if params and params[0] in ("self", "cls") and isinstance(info.node, cst.FunctionDef):
            kinds[params[0]] = Kind.UNKNOWN
        if transform in _FILTERED:
            return {p: Kind.UNKNOWN for p in params}
        options = {a.keyword.value: a.value for a in (call.args if call else ()) if a.keyword is not None}
        if transform in _JIT_LIKE:
            for key in ("static_argnums", "static_broadcasted_argnums"):
                if key in options:
                    numbers = _literal_ints(options[key])
                    if numbers is None:
                        return {p: Kind.UNKNOWN for p in params}
                    for n in numbers:
                        index = bound_positional + n if n >= 0 else len(params) + n
                        if 0 <= index < len(params):
                            kinds[params[index]] = Kind.STATIC
            if "static_argnames" in options:
                names = _literal_strs(options["static_argnames"])
                if names is None:
                    return {p: Kind.UNKNOWN for p in params}
                for name in names:
                    if name in kinds:
                        kinds[name] = Kind.STATIC
        elif transform in _GRAD_LIKE:
            argnums = _literal_ints(options["argnums"]) if "argnums" in options else [0]
            if argnums is None:
                return {p: Kind.UNKNOWN for p in params}
            free = params[bound_positional:]
            for index, p in enumerate(free):
                if index not in argnums:
                    kinds[p] = Kind.UNKNOWN  # concrete unless the caller is itself traced
        elif transform in _VMAP_LIKE and ("in_axes" in options or _positional_in_axes(call) is not None):
            axes = options["in_axes"] if "in_axes" in options else _positional_in_axes(call)
            if isinstance(axes, (cst.Tuple, cst.List)):
                free = params[bound_positional:]
                for index, element in enumerate(axes.elements):
                    if index < len(free) and isinstance(element.value, cst.Name) and element.value.value == "None":
                        kinds[free[index]] = Kind.UNKNOWN
        return kinds

    def _propagate_from(self, info: _Function) -> bool:
        """Calls inside a traced function trace the same-module functions they reach; nested functions that the
        traced body uses are traced too (unless handed to a host callback)."""
        changed = False
        for call in self._calls_in.get(info.node, ()):
            for function in self._definitions_of_callee(call):
                callee = self._functions[function]
                kinds = _bind_arguments(callee.params, call, lambda e: self._kind(e, info))
                changed |= self._mark(function, kinds)
        for nested in self._nested.get(info.node, ()):
            if nested in self._host_only:
                continue
            changed |= self._mark(nested, {})
        return changed

    def _definitions_of_callee(self, call: cst.Call) -> Iterator[cst.FunctionDef]:
        if isinstance(call.func, cst.Name) and call.func.value not in _BUILTINS:
            yield from self._definitions(call.func)

    # ---- kinds of expressions ------------------------------------------------------------------------------

    def _solve_env(self, info: _Function | None, bindings, params: dict[str, Kind]) -> dict[str, Kind]:
        env: dict[str, Kind] = dict(params)
        local_names = {name for name, _ in bindings}
        for name in local_names - set(params):
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
            if any(n == name for n, _ in scope.bindings):
                return Kind.UNKNOWN  # a function not analysed as traced: its locals are unknown
            scope = scope.parent
        if name in self._module_env:
            return self._module_env[name]
        if name in _BUILTINS:
            return Kind.STATIC
        return Kind.UNKNOWN

    def _kind(self, expr: cst.BaseExpression, info: _Function | None, env: dict[str, Kind] | None = None) -> Kind:
        kind = lambda e: self._kind(e, info, env)  # noqa: E731
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis)):
            return Kind.STATIC
        if isinstance(expr, cst.ConcatenatedString):
            return join([kind(expr.left), kind(expr.right)])
        if isinstance(expr, cst.FormattedString):
            return join(kind(p.expression) for p in expr.parts if isinstance(p, cst.FormattedStringExpression))
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False", "None"):
                return Kind.STATIC
            if self._static_attrs and self._static_attribute(expr, info):
                return Kind.STATIC
            return self._lookup(expr.value, info, env)
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in STATIC_ATTRIBUTES:
                return Kind.STATIC
            if self._names.qualified(expr) is not None:
                return Kind.STATIC  # a module attribute such as jnp.float32 or jax.numpy.pi
            if self._static_attrs and self._static_attribute(expr, info):
                return Kind.STATIC
            return kind(expr.value)
        if isinstance(expr, cst.Subscript):
            parts = [kind(expr.value)]
            for element in expr.slice:
                if isinstance(element.slice, cst.Index):
                    parts.append(kind(element.slice.value))
                else:
                    parts.extend(kind(x) for x in (element.slice.lower, element.slice.upper, element.slice.step) if x)
            return join(parts)
        if isinstance(expr, cst.Call):
            return self._call_kind(expr, kind)
        if isinstance(expr, cst.BinaryOperation):
            return join([kind(expr.left), kind(expr.right)])
        if isinstance(expr, cst.UnaryOperation):
            return kind(expr.expression)
        if isinstance(expr, cst.BooleanOperation):
            return join([kind(expr.left), kind(expr.right)])
        if isinstance(expr, cst.Comparison):
            if all(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in expr.comparisons):
                return Kind.STATIC  # identity is a Python bool, of tracers too (`m.left is m.right`)
            return join([kind(expr.left), *(kind(c.comparator) for c in expr.comparisons)])
        if isinstance(expr, cst.IfExp):
            return join([kind(expr.test), kind(expr.body), kind(expr.orelse)])
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
            return join(kind(e.value) for e in expr.elements)
        if isinstance(expr, cst.Dict):
            parts = []
            for element in expr.elements:
                if isinstance(element, cst.DictElement):
                    parts.extend([kind(element.key), kind(element.value)])
                else:
                    parts.append(kind(element.value))
            return join(parts)
        if isinstance(expr, cst.Lambda):
            return Kind.STATIC
        if isinstance(expr, cst.NamedExpr):
            return kind(expr.value)
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            return self._comprehension_kind(expr, info, env)
        return Kind.UNKNOWN

    def _call_kind(self, call: cst.Call, kind) -> Kind:
        callee = self._names.callee(call)
        if callee is None and isinstance(call.func, cst.Name) and call.func.value in _BUILTINS:
            if self._lookup(call.func.value, None, None) is Kind.STATIC and call.func.value in STATIC_CALLS:
                return Kind.STATIC
            callee = call.func.value
        if callee in STATIC_CALLS:
            return Kind.STATIC
        arguments = join(kind(a.value) for a in call.args)
        if callee is not None and callee.startswith(ARRAY_NAMESPACES):
            return Kind.TRACED  # staged into the computation, even from static arguments
        if callee in TREE_STRUCTURES:
            return Kind.STATIC
        if callee in TREE_MAPS and call.args:
            return self._tree_map_kind(call, kind)
        if isinstance(call.func, cst.Attribute):
            return join([kind(call.func.value), arguments])  # a method: x.sum(), params.get("w")
        if callee in _BUILTINS:
            return arguments
        return Kind.TRACED if arguments is Kind.TRACED else Kind.UNKNOWN

    def _tree_map_kind(self, call: cst.Call, kind) -> Kind:
        """A tree map returns what its function returns: traced leaves mapped by `_is_none` are Python bools."""
        mapped = call.args[0].value
        trees = join(kind(a.value) for a in call.args[1:] if a.keyword is None)
        if self._names.qualified(mapped) is not None and self._names.qualified(mapped).startswith(ARRAY_NAMESPACES):
            return trees
        if isinstance(mapped, cst.Lambda) and mapped in self._functions:
            info = self._functions[mapped]
            return self._kind(mapped.body, info, {p: trees for p in info.params})
        return Kind.UNKNOWN

    def _comprehension_kind(self, expr, info, env) -> Kind:
        inner = dict(env or {})
        parts = []
        clause = expr.for_in
        while clause is not None:
            iter_kind = self._kind(clause.iter, info, inner)
            parts.append(iter_kind)
            for name in target_names(clause.target):
                inner[name] = iter_kind
            parts.extend(self._kind(i.test, info, inner) for i in clause.ifs)
            clause = clause.inner_for_in
        if isinstance(expr, cst.DictComp):
            parts.extend([self._kind(expr.key, info, inner), self._kind(expr.value, info, inner)])
        else:
            parts.append(self._kind(expr.elt, info, inner))
        return join(parts)


class _BindingCollector:
    """Records every function, the names each binds (with the expression bound), the calls it makes, the
    functions nested in it, and which nested functions are only ever handed to host callbacks.

    It walks the module itself, calling its `visit_X`/`leave_X` methods as a LibCST visitor's traversal would (in
    the same order), with each node type's methods looked up once: it records something at nearly every node (its
    enclosing function), and LibCST's `on_visit`/`on_leave` look the methods up by a formatted name at each of
    them (TracedAnalysis's CPU on the 123 real files the screens pass: 3.0 s with LibCST's traversal)."""

    def __init__(self, analysis: TracedAnalysis) -> None:
        self.analysis = analysis
        self.stack: list[_Function] = []
        self.module_bindings: list[tuple[str, object]] = []
        analysis._all_calls = []
        analysis._calls_in = {}
        analysis._nested = {}
        analysis._host_only = set()
        analysis._enclosing = self.enclosing = {}
        self._class_depth = 0

    def collect(self, module: cst.Module) -> None:
        methods: dict[type, tuple] = {}  # node type -> its (visit_X, leave_X) methods, None where absent
        enclosing, stack = self.enclosing, self.stack

        def walk(node: cst.CSTNode) -> None:
            # The innermost FunctionDef/Lambda above `node`: what a walk up its parents would find first.
            enclosing[node] = stack[-1].node if stack else None
            kind = type(node)
            found = methods.get(kind)
            if found is None:
                found = methods[kind] = (
                    getattr(self, f"visit_{kind.__name__}", None), getattr(self, f"leave_{kind.__name__}", None)
                )
            visit, leave = found
            if visit is not None:
                visit(node)  # none of them returns False: the children are always visited
            for child in code_children(node):  # nothing the collector records lies in TRIVIA
                walk(child)
            if leave is not None:
                leave(node)

        walk(module)

    def _bind(self, name: str, source) -> None:
        if self._class_depth and not self.stack:
            return
        (self.stack[-1].bindings if self.stack else self.module_bindings).append((name, source))

    def _enter_function(self, node: FunctionNode) -> None:
        parent = self.stack[-1] if self.stack else None
        info = self.analysis._register(node, parent)
        if parent is not None:
            self.analysis._nested.setdefault(parent.node, []).append(node)
        self.stack.append(info)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name.value, Kind.STATIC)
        self._enter_function(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._enter_function(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.stack.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name.value, Kind.STATIC)
        self._class_depth += 1

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_depth -= 1

    def visit_Call(self, node: cst.Call) -> None:
        self.analysis._all_calls.append(node)
        if self.stack:
            self.analysis._calls_in.setdefault(self.stack[-1].node, []).append(node)
        if self.analysis._names.callee(node) in HOST_CALLBACKS and node.args:
            for function, _ in self.analysis._functions_in(node.args[0].value):
                self.analysis._host_only.add(function)
            if isinstance(node.args[0].value, cst.Lambda):
                self.analysis._host_only.add(node.args[0].value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for name in target_names(target.target):
                self._bind(name, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            for name in target_names(node.target):
                self._bind(name, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for name in target_names(node.target):
            self._bind(name, node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        for name in target_names(node.target):
            self._bind(name, node.value)

    def visit_For(self, node: cst.For) -> None:
        iterable = node.iter
        callee = iterable.func.value if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) else None
        if callee == "enumerate" and iterable.args and isinstance(node.target, cst.Tuple) and len(node.target.elements) == 2:
            for name in target_names(node.target.elements[0].value):
                self._bind(name, Kind.STATIC)
            for name in target_names(node.target.elements[1].value):
                self._bind(name, iterable.args[0].value)
            return
        if callee == "zip" and isinstance(node.target, cst.Tuple) and len(node.target.elements) == len(iterable.args):
            for element, arg in zip(node.target.elements, iterable.args):
                for name in target_names(element.value):
                    self._bind(name, arg.value)
            return
        for name in target_names(node.target):
            self._bind(name, iterable)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for name in target_names(node.asname.name):
                self._bind(name, Kind.UNKNOWN)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind(node.name.name.value, Kind.STATIC)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            local = alias.asname.name if alias.asname else alias.name
            while isinstance(local, cst.Attribute):
                local = local.value
            self._bind(local.value, Kind.STATIC)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            local = alias.asname.name if alias.asname else alias.name
            if isinstance(local, cst.Name):
                self._bind(local.value, Kind.STATIC)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name.value, Kind.UNKNOWN)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._bind(item.name.value, Kind.UNKNOWN)






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


def _bind_arguments(params: list[str], call: cst.Call, kind_of) -> dict[str, Kind]:
    """Parameter kinds from one call site: positional by order, keywords by name, the rest unknown."""
    kinds: dict[str, Kind] = {}
    position = 0
    for arg in call.args:
        if arg.star:
            return {p: max(kinds.get(p, Kind.STATIC), kind_of(arg.value)) for p in params} | {
                p: Kind.UNKNOWN for p in params if p not in kinds
            }
        if arg.keyword is not None:
            if arg.keyword.value in params:
                kinds[arg.keyword.value] = kind_of(arg.value)
        elif position < len(params):
            kinds[params[position]] = kind_of(arg.value)
            position += 1
    return kinds


def _positional_in_axes(call: cst.Call | None) -> cst.BaseExpression | None:
    """The `in_axes` of `jax.vmap(f, (0, None))`, given positionally after the function."""
    if call is None:
        return None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[1].value if len(positional) >= 2 else None


def _literal_ints(expr: cst.BaseExpression) -> list[int] | None:
    if isinstance(expr, cst.Integer):
        return [int(expr.value)]
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, cst.Integer):
        return [-int(expr.expression.value)]
    if isinstance(expr, (cst.Tuple, cst.List)):
        values: list[int] = []
        for element in expr.elements:
            inner = _literal_ints(element.value)
            if inner is None:
                return None
            values.extend(inner)
        return values
    return None


def _literal_strs(expr: cst.BaseExpression) -> list[str] | None:
    if isinstance(expr, cst.SimpleString):
        return [expr.evaluated_value]
    if isinstance(expr, (cst.Tuple, cst.List)):
        values: list[str] = []
        for element in expr.elements:
            inner = _literal_strs(element.value)
            if inner is None:
                return None
            values.extend(inner)
        return values
    return None
