"""Which local names are known to hold a JAX array, asked with LibCST nodes by the rules that have not moved onto
`ast` (dataflow, predicates, batches, scan loops), and the evidence short of proof that a parameter holds one.

A name holds a JAX array only if EVERY binding of it in its scope makes one: a call from an allowlist of
`jax.numpy`/`jax.random` functions that always return a single array, `x.at[i].set(v)`, arithmetic of known
arrays and numbers, indexing, `.T`/`.reshape(...)`/`.astype(...)` of a known array, or a parameter annotated
`jax.Array`/`jnp.ndarray`. Anything else (NumPy arrays, lists, dicts, unannotated parameters, `for`/`with`
targets, `global`/`nonlocal` rebinding) leaves the name unproven. The analysis is flow-insensitive: the proven
names are the greatest set closed under their bindings. The same fact on `ast` is jaxfix/facts/values.py (with
the refinements "at run time" and "inexact", Python ints and JAX's aliasing question, `rebind_blocker`, which
moved there with JF401 after agreeing word for word on every tree); benchmarks/agreement.py's
`values-array-exact` family asks both `is_array`s on every name.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst
from libcst.metadata import (
    Assignment,
    ClassScope,
    ComprehensionScope,
    FunctionScope,
    Scope,
    ScopeProvider,
)

from jaxfix.analysis.dataflow import ARRAY_METHODS, Parameter
from jaxfix.analysis.summaries import array_output
from jaxfix.analysis.syntax import AT_METHODS, at_base, is_number
from jaxfix.analysis.traced import Kind
from jaxfix.facts.knowledge import jaxtyping
from jaxfix.facts.knowledge.jax import LOUD_FUNCTIONS  # noqa: F401 (read from here too)
from jaxfix.facts.knowledge.jax import FRESH_ARRAY_FUNCTIONS as _FRESH_FUNCTIONS, RANDOM_SAMPLERS as _RANDOM
from jaxfix.facts.knowledge.jax import DTYPE_POSITION  # noqa: F401 (read from here by shapes.py)
from jaxfix.facts.knowledge.jax import VIEW_ARRAY_FUNCTIONS as _VIEW_FUNCTIONS
from jaxfix.facts.knowledge.jax import (  # the array methods and attributes: facts/values.py reads them too
    ARRAY_FRESH_METHODS as _FRESH_METHODS, ARRAY_VIEW_ATTRIBUTES as _VIEW_ATTRIBUTES, ARRAY_VIEW_METHODS as _VIEW_METHODS,
)
from jaxfix.facts.knowledge.tables import ARRAY_ANNOTATIONS, TRACED_ARRAY_ANNOTATIONS
from jaxfix.facts.arrays import CalledArray, RecordedArray  # noqa: F401 (the evidence classes: one copy, read from here)
from jaxfix.facts.model import ModuleModel

_JNP = "jax.numpy."

_ARITHMETIC = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power, cst.MatrixMultiply,
    cst.BitAnd, cst.BitOr, cst.BitXor, cst.LeftShift, cst.RightShift,
)  # fmt: skip
# The property of names solved per scope: a JAX array (trusting `jax.Array` annotations). The refinements "at run
# time" and "inexact", and the aliasing questions of JF401, moved to jaxfix/facts/values.py.
_ARRAY = "array"


# What a value may hold (`ArrayAnalysis.value_kinds`): one JAX array, a Python number, or anything else.
ARRAY_VALUE, NUMBER, OTHER = "array", "number", "other"
_AUGMENTED_BINARY = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
    cst.PowerAssign: cst.Power,
}


class ArrayAnalysis:
    def __init__(self, context: ModuleModel) -> None:
        self._context = context
        self._names = context.names
        self._parents = context.parents
        self._scopes = context.wrapper.resolve(ScopeProvider)
        self._solved: dict[tuple[Scope, str], set[str]] = {}
        self._deciding_integer: set[tuple[Scope, str]] = set()

    # ---- queries -------------------------------------------------------------------------------------------

    def value_kinds(
        self, expr: cst.BaseExpression, at: cst.CSTNode, rows: frozenset = frozenset(), seen: frozenset = frozenset(),
        calls=None,
    ) -> frozenset:
        """What `expr`, evaluated at the statement `at`, may hold: ARRAY_VALUE (one JAX array), NUMBER (a Python
        number) or OTHER (a tuple, a list, anything unknown), as a set of those (== {ARRAY_VALUE}: surely one
        array, not a pytree of them: what jnp.stack, lax.scan and jax.vmap need). `rows` are names known to
        hold arrays (the rows a loop walks). Names follow their reaching definitions; a cycle through a loop
        holds if every way into it does. `calls(call)`, when given, may prove that a call returns an array
        (JF301 follows same-module functions). Shared by JF102 and JF301."""
        kinds = lambda e: self.value_kinds(e, at, rows, seen, calls)  # noqa: E731
        dataflow = self._context.dataflow
        if is_number(expr):
            return frozenset({NUMBER})
        if isinstance(expr, cst.Name):
            if expr.value in rows:
                return frozenset({ARRAY_VALUE})
            flow = dataflow.flow(dataflow.enclosing_function(at))
            sources = flow.reaching(at, expr.value)
            if not sources or len(seen) > 12:
                return frozenset({ARRAY_VALUE if dataflow.is_array_like(expr) else OTHER})
            found: set[str] = set()
            for source in sources:
                if source in seen:
                    continue
                if isinstance(source, Parameter):
                    found.add(ARRAY_VALUE if dataflow.is_array_like(expr) else OTHER)
                elif isinstance(source, cst.BaseExpression):
                    found |= self.value_kinds(source, self._statement_of(source), rows, seen | {source}, calls)
                elif isinstance(source, cst.AugAssign) and isinstance(source.target, cst.Name):
                    operator = _AUGMENTED_BINARY.get(type(source.operator))
                    if operator is None:
                        found.add(OTHER)
                    else:
                        as_binary = cst.BinaryOperation(source.target, operator(), source.value)
                        found |= self._binary_kinds(as_binary, self._statement_of(source), rows, seen | {source}, calls)
                else:
                    found.add(OTHER)
            return frozenset(found) if found else frozenset({OTHER})
        if isinstance(expr, cst.BinaryOperation):
            return self._binary_kinds(expr, at, rows, seen, calls)
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return frozenset({OTHER})
            inner = kinds(expr.expression)
            return frozenset({ARRAY_VALUE}) if ARRAY_VALUE in inner else inner  # -tuple raises
        if isinstance(expr, cst.IfExp):
            return kinds(expr.body) | kinds(expr.orelse)
        if isinstance(expr, cst.Subscript):
            plain = all(isinstance(e.slice, (cst.Index, cst.Slice)) for e in expr.slice)
            return frozenset({ARRAY_VALUE}) if plain and kinds(expr.value) == {ARRAY_VALUE} else frozenset({OTHER})
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("T", "mT", "real", "imag"):
            return frozenset({ARRAY_VALUE}) if kinds(expr.value) == {ARRAY_VALUE} else frozenset({OTHER})
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and self._names.callee(expr) is None:
            receiver, method = expr.func.value, expr.func.attr.value
            base = at_base(receiver)
            if method in AT_METHODS and method != "get" and base is not None:
                return frozenset({ARRAY_VALUE}) if kinds(base) == {ARRAY_VALUE} else frozenset({OTHER})
            if method in ARRAY_METHODS:
                return frozenset({ARRAY_VALUE}) if kinds(receiver) == {ARRAY_VALUE} else frozenset({OTHER})
        if dataflow.is_array_like(expr) or (calls is not None and isinstance(expr, cst.Call) and calls(expr)):
            return frozenset({ARRAY_VALUE})
        return frozenset({OTHER})

    def _binary_kinds(self, expr: cst.BinaryOperation, at, rows, seen, calls) -> frozenset:
        left = self.value_kinds(expr.left, at, rows, seen, calls)
        right = self.value_kinds(expr.right, at, rows, seen, calls)
        if left == {ARRAY_VALUE} or right == {ARRAY_VALUE}:
            return frozenset({ARRAY_VALUE})  # an array on either side makes an array (tuple + array too)
        union = left | right
        if OTHER not in union:
            return frozenset({ARRAY_VALUE}) if ARRAY_VALUE in union else frozenset({NUMBER})
        if isinstance(expr.operator, (cst.Add, cst.Multiply)):
            return frozenset({OTHER})  # tuples concatenate, an int repeats a tuple
        return frozenset({ARRAY_VALUE})  # other operators raise on tuples and lists

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        current = node
        while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            current = self._parents.get(current)
        return current if current is not None else node


    def traced_argument(self, expr: cst.BaseExpression) -> str | None:
        """Evidence from use, not proof: for a name that is only ever a non-static parameter of a function that
        a JAX transformation traces (`@jax.jit`, a lax body), the function's name; else None. JAX hands such a
        parameter a pytree of arrays: usually one array, but a tuple, list or dict may come in. So a rule may
        rely on it only where anything but an array fails loudly, as indexing it with a traced index does: a
        tuple or list raises TracerIntegerConversionError at trace time, a dict "unhashable type" (JAX 0.10.2,
        kept true by tests/test_evidence.py). Scanning or mapping over it would not: a tuple is a pytree
        there, walked leaf by leaf."""
        if not isinstance(expr, cst.Name):
            return None
        owner = self.owner(expr)
        if not isinstance(owner, FunctionScope):
            return None
        bindings = list(owner.assignments[expr.value])
        if len(bindings) != 1 or not isinstance(bindings[0], Assignment) or not isinstance(bindings[0].node, cst.Param):
            return None
        param = bindings[0].node
        function = self._parents.get(self._parents.get(param))
        if not isinstance(function, cst.FunctionDef) or param in (function.params.star_arg, function.params.star_kwarg):
            return None
        if param.annotation is not None and not self._array_param(param):
            return None  # `xs: tuple[jax.Array, ...]`, `xs: list`: the code says what it is
        traced = self._context.traced
        if not traced.is_traced(function) or traced.seeded_kind(function, expr.value) is not Kind.TRACED:
            return None
        if self._passed_a_container(function, param):
            return None
        return function.name.value

    def recorded_argument(self, expr: cst.BaseExpression) -> RecordedArray | None:
        """Evidence from a recorded run, not proof: for a name that is only ever a non-static parameter of a
        traced function which held one array in every call `jaxfix record` saw (recording.py), what was
        recorded; else None. Another caller may pass a tuple, where scanning or mapping over the parameter
        would compute other values without an error: a rule that relies on this offers an unsafe fix that
        says so, for `jaxfix apply --verify` to check with inputs from the same record."""
        facts = self._context.project.recorded
        found = self._traced_parameter(expr) if facts else None
        if found is None:
            return None
        function, param, qualname = found
        recorded = facts.get(qualname)
        if recorded is None:
            return None
        positional = [*function.params.posonly_params, *function.params.params]
        if len(positional) != len(recorded.positional):
            return None  # recorded from another version of the function
        if param in positional:
            rank = recorded.positional[positional.index(param)]
        else:
            rank = recorded.keywords.get(param.name.value)
        if rank is None or self._passed_a_container(function, param):
            return None
        return RecordedArray(function.name.value, param.name.value, rank, recorded.calls)

    def called_argument(self, expr: cst.BaseExpression) -> CalledArray | None:
        """Evidence from the project's calls, not proof: for a name that is only ever a non-static parameter of a
        traced function which every call in the project passes an array (project.py's
        `Project.call_site_evidence`), how many calls; else None. A caller outside the project may pass a
        tuple, where scanning or mapping over the parameter would compute other values without an error: a
        rule that relies on this offers an unsafe fix that says so, for `jaxfix apply --verify` to check."""
        facts = self._context.project.called_with
        found = self._traced_parameter(expr) if facts else None
        if found is None:
            return None
        function, param, qualname = found
        sites = facts.get(qualname, {}).get(param.name.value)
        if sites is None or self._passed_a_container(function, param):
            return None
        return CalledArray(function.name.value, param.name.value, sites)

    def argument_evidence(self, expr: cst.BaseExpression) -> RecordedArray | CalledArray | None:
        """What shows `expr`, a parameter of a traced function, to hold an array short of proof: a recorded run
        (`recorded_argument`), else the project's calls (`called_argument`); None when neither does."""
        return self.recorded_argument(expr) or self.called_argument(expr)

    def _traced_parameter(self, expr: cst.BaseExpression) -> tuple[cst.FunctionDef, cst.Param, str] | None:
        """(function, parameter, the function's qualified name) for a name that is only ever a non-static
        parameter (not `*args`/`**kwargs`, not annotated as anything but an array) of a traced function."""
        if not isinstance(expr, cst.Name):
            return None
        owner = self.owner(expr)
        if not isinstance(owner, FunctionScope):
            return None
        bindings = list(owner.assignments[expr.value])
        if len(bindings) != 1 or not isinstance(bindings[0], Assignment) or not isinstance(bindings[0].node, cst.Param):
            return None
        param = bindings[0].node
        function = self._parents.get(self._parents.get(param))
        if not isinstance(function, cst.FunctionDef) or param in (function.params.star_arg, function.params.star_kwarg):
            return None
        if param.annotation is not None and not self._array_param(param):
            return None  # `xs: tuple[jax.Array, ...]`: the code says what it is
        traced = self._context.traced
        if not traced.is_traced(function) or traced.param_kind(function, expr.value) is not Kind.TRACED:
            return None
        qualname = next((q for q, node in self._context.qualified_defs.items() if node is function), None)
        return (function, param, qualname) if qualname is not None else None

    def library_output(self, expr: cst.BaseExpression) -> str | None:
        """Evidence from use, not proof, like `traced_argument`: for a name bound once in its scope, to the output
        of a library call that by convention returns one array (a Flax module's `model.apply(variables, x)`,
        `state.apply_fn(...)`, a Haiku `net.apply(params, x)`: `summaries.array_output`), that call's code
        (`model.apply(...)`); else None. A module may return a tuple or a dict as well (a graph network's
        GraphsTuple), so a rule may rely on it only where anything but an array fails loudly."""
        if not isinstance(expr, cst.Name):
            return None
        owner = self.owner(expr)
        if owner is None or isinstance(owner, ClassScope):
            return None
        bindings = list(owner.assignments[expr.value])
        if len(bindings) != 1 or not isinstance(bindings[0], Assignment):
            return None
        value = self._bound_value(bindings[0])
        if not isinstance(value, cst.Call) or array_output(self._context, value) is None:
            return None
        return f"{self._context.code_for(value.func)}(...)"

    def _passed_a_container(self, function: cst.FunctionDef, param: cst.Param) -> bool:
        """Whether a call of `function` by name in this module passes a list, tuple, dict or set display or
        comprehension for `param` (directly, or through a name bound only to one)."""
        scope = self._scopes.get(function)
        if scope is None:
            return False
        positional = [*function.params.posonly_params, *function.params.params]
        position = positional.index(param) if param in positional else None
        containers = (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp)
        for assignment in scope.assignments[function.name.value]:
            for reference in assignment.references:
                call = self._parents.get(reference.node)
                if not isinstance(call, cst.Call) or call.func is not reference.node:
                    continue
                plain = [a for a in call.args if a.keyword is None and not a.star]
                passed = [a.value for a in call.args if a.keyword is not None and a.keyword.value == param.name.value]
                if position is not None and position < len(plain):
                    passed.append(plain[position].value)
                for value in passed:
                    if isinstance(value, containers):
                        return True
                    if isinstance(value, cst.Name):
                        owner = self.owner(value)
                        bound = list(owner.assignments[value.value]) if owner is not None else []
                        values = [self._bound_value(b) for b in bound]
                        if values and all(isinstance(v, containers) for v in values):
                            return True
        return False

    def _bound_value(self, assignment) -> cst.BaseExpression | None:
        node = getattr(assignment, "node", None)
        parent = self._parents.get(node) if node is not None else None
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            return self._parents[parent].value
        if isinstance(parent, cst.AnnAssign) and parent.target is node:
            return parent.value
        return None

    def is_array(self, name: cst.Name) -> bool:
        """Whether `name`, where it stands, is known to hold a JAX array: every binding of it makes one."""
        owner = self.owner(name)
        return owner is not None and name.value in self._solve(owner, _ARRAY)

    def is_array_expression(self, expr: cst.BaseExpression) -> bool:
        return self._is_array(expr, None, None)

    def qualified(self, expr: cst.BaseExpression) -> str | None:
        return self._names.qualified(expr)

    def callee(self, call: cst.Call) -> str | None:
        return self._names.callee(call)

    def owner(self, name: cst.Name) -> Scope | None:
        """The scope whose bindings `name` refers to (following `global`/`nonlocal`), or None if unbound."""
        scope = self._scopes.get(name)
        if scope is None:
            return None
        assignments = scope[name.value]
        return next(iter(assignments)).scope if assignments else None

    def _solve(self, owner: Scope, prop: str) -> set[str]:
        """The names of `owner` proven to have `prop` (_ARRAY): the greatest set of names
        all of whose bindings give the property, given that the names in the set have it."""
        key = (owner, prop)
        if key in self._solved:
            return self._solved[key]
        self._solved[key] = set()  # while solving, reads of this scope's names from elsewhere are unproven
        if isinstance(owner, (ClassScope, ComprehensionScope)):
            return self._solved[key]
        candidates: dict[str, list] = {}
        for assignment in owner.assignments:
            candidates.setdefault(assignment.name, []).append(assignment)
        env = set(candidates) - self._comprehension_walrus_targets(owner)
        changed = True
        while changed:
            changed = False
            for name in list(env):
                if not all(self._binds(a, owner, env, prop) for a in candidates[name]):
                    env.discard(name)
                    changed = True
        self._solved[key] = env
        return env

    def _binds(self, assignment, owner: Scope, env: set[str], prop: str) -> bool:
        """Whether one binding gives its name `prop`, assuming the names in `env` have it."""
        if not isinstance(assignment, Assignment) or self._scopes.get(assignment.node) is not owner:
            return False  # imports, builtins, and `global`/`nonlocal` rebinding from another scope
        node = assignment.node
        if isinstance(node, cst.Param):
            return self._array_param(node)
        parent = self._parents.get(node)
        value = None
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            value = self._parents[parent].value
        elif isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.target is node:
            if parent.value is None:
                return True  # a bare annotation binds nothing
            value = parent.value
        elif isinstance(parent, cst.AugAssign) and parent.target is node:
            return self._array_or_number(parent.value, owner, env, prop)  # every augmented operator is arithmetic
        if value is None:
            return False  # for/with/except targets, unpacking, def, class
        return self._is_array(value, owner, env, prop)

    def _array_param(self, param: cst.Param) -> bool:
        """A parameter annotated `jax.Array`/`jnp.ndarray`, without a default (which could be anything)."""
        if param.default is not None or param.annotation is None:
            return False
        function = self._parents.get(self._parents.get(param))
        if not isinstance(function, cst.FunctionDef):
            return False
        if param is function.params.star_arg or param is function.params.star_kwarg:
            return False
        annotation = param.annotation.annotation
        traced = self._context.traced
        in_traced_code = traced.is_traced(function) and traced.param_kind(function, param.name.value) is Kind.TRACED
        accepted = ARRAY_ANNOTATIONS | TRACED_ARRAY_ANNOTATIONS if in_traced_code else ARRAY_ANNOTATIONS
        if self.qualified(annotation) in accepted:
            return True
        if isinstance(annotation, cst.Subscript):
            head = self.qualified(annotation.value) or ""
            # `npt.NDArray[np.float32]` in traced code
            if head in accepted and head in TRACED_ARRAY_ANNOTATIONS:
                return True
            # jaxtyping's `Float[Array, "n d"]`: an array of the first element's type
            array = annotation.slice[0].slice if len(annotation.slice) == 2 else None
            if head.startswith(jaxtyping.MODULE) and isinstance(array, cst.Index):
                return self.qualified(array.value) in accepted
        return False

    def _name_has(self, name: cst.Name, owner: Scope | None, env: set[str] | None, prop: str) -> bool:
        """Whether `name` has `prop`: by the assumption `env` for names of `owner` (while solving it), else by
        the solution for the scope the name belongs to."""
        scope = self.owner(name)
        if scope is None:
            return False
        if scope is owner and env is not None:
            return name.value in env
        return name.value in self._solve(scope, prop)

    def _is_array(
        self, expr: cst.BaseExpression, owner: Scope | None, env: set[str] | None, prop: str = _ARRAY
    ) -> bool:
        """Whether `expr` makes a JAX array (prop _ARRAY), or makes one even when callers break annotations
        (prop _RUNTIME), given that the names of `owner` in `env` hold one."""
        is_array = lambda e: self._is_array(e, owner, env, prop)  # noqa: E731
        if isinstance(expr, cst.Name):
            return self._name_has(expr, owner, env, prop)
        if isinstance(expr, cst.Call):
            callee = self.callee(expr)
            if callee is not None:
                return self._array_call(callee, expr)
            method = _method(expr)
            if method is None:
                return False
            base, name = method
            if name in AT_METHODS and _at_base(base) is not None:
                return is_array(_at_base(base))
            return (name in _FRESH_METHODS or name in _VIEW_METHODS) and not _has_out(expr) and is_array(base)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in _VIEW_ATTRIBUTES and is_array(expr.value)
        if isinstance(expr, cst.Subscript):
            return is_array(expr.value)
        if isinstance(expr, cst.BinaryOperation):
            if not isinstance(expr.operator, _ARITHMETIC):
                return False
            sides = [expr.left, expr.right]
            return any(is_array(s) for s in sides) and all(self._array_or_number(s, owner, env, prop) for s in sides)
        if isinstance(expr, cst.UnaryOperation):
            return isinstance(expr.operator, (cst.Minus, cst.Plus, cst.BitInvert)) and is_array(expr.expression)
        if isinstance(expr, cst.IfExp):
            return is_array(expr.body) and is_array(expr.orelse)
        if isinstance(expr, cst.NamedExpr):
            return is_array(expr.value)
        return False

    def _array_call(self, callee: str, call: cst.Call) -> bool:
        if callee not in _FRESH_FUNCTIONS and callee not in _VIEW_FUNCTIONS and callee not in _RANDOM:
            return False
        if _has_out(call) or any(a.keyword is not None and a.keyword.value == "retstep" for a in call.args):
            return False  # `out=` returns the buffer given; `linspace(retstep=True)` returns a tuple
        if callee == _JNP + "where":
            return len(call.args) == 3 and all(a.keyword is None and not a.star for a in call.args)
        return True

    def _array_or_number(self, expr, owner, env, prop) -> bool:
        return _is_number(expr) or self._is_array(expr, owner, env, prop)

    def _comprehension_walrus_targets(self, owner: Scope) -> set[str]:
        """Names a `:=` inside a comprehension binds in `owner` (LibCST files them under the comprehension)."""
        names = set()
        for scope in self._all_scopes:
            if not isinstance(scope, ComprehensionScope):
                continue
            enclosing = scope.parent
            while isinstance(enclosing, ComprehensionScope):
                enclosing = enclosing.parent
            if enclosing is owner:
                for assignment in scope.assignments:
                    if isinstance(self._parents.get(getattr(assignment, "node", None)), cst.NamedExpr):
                        names.add(assignment.name)
        return names

    @cached_property
    def _all_scopes(self) -> list[Scope]:
        return list({id(s): s for s in self._scopes.values() if s is not None}.values())


def _is_number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return _is_number(expr.expression)
    return False


def _method(call: cst.Call) -> tuple[cst.BaseExpression, str] | None:
    if isinstance(call.func, cst.Attribute):
        return call.func.value, call.func.attr.value
    return None


def _at_base(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` in `x.at[idx]`, else None."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "at":
        return expr.value.value
    return None


def _has_out(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value == "out" for a in call.args)


LOUD_OPERATORS = (cst.Subtract, cst.Divide, cst.FloorDivide, cst.Power, cst.MatrixMultiply)
LOUD_WITH_ARRAYS = (cst.Add, cst.Multiply)  # `x * 2` repeats a tuple, `x + x` concatenates: only with an array or float
LOUD_ATTRIBUTES = frozenset("shape ndim T dtype size astype reshape sum mean max min ravel flatten transpose squeeze at".split())
# The functions that raise so: LOUD_FUNCTIONS (jaxfix/facts/knowledge/jax.py).


def loud_use(context: ModuleModel, name: str, expr: cst.BaseExpression) -> cst.CSTNode | None:
    """A use of `name` in `expr`, evaluated whenever `expr` is (not in a branch of `a if c else b`, the right of
    `and`/`or`, a lambda or a comprehension), that raises if `name` holds a tuple, list or dict instead of one
    array; None if there is none."""
    parents = context.parents
    for node in _evaluated(expr):
        if not (isinstance(node, cst.Name) and node.value == name):
            continue
        parent = parents.get(node)
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in LOUD_ATTRIBUTES:
            return parent
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Minus):
            return parent
        if isinstance(parent, cst.BinaryOperation):
            if isinstance(parent.operator, LOUD_OPERATORS):
                return parent
            other = parent.right if parent.left is node else parent.left
            if isinstance(parent.operator, LOUD_WITH_ARRAYS) and (
                isinstance(other, cst.Float) or (other is not node and context.dataflow.is_array_like(other))
            ):
                return parent
        if isinstance(parent, cst.Arg) and parent.value is node and parent.keyword is None and not parent.star:
            call = parents.get(parent)
            if isinstance(call, cst.Call) and context.names.callee(call) in LOUD_FUNCTIONS:
                return call
    return None


def _evaluated(expr: cst.CSTNode):
    """The nodes of `expr` that run every time it does."""
    yield expr
    if isinstance(expr, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
        return
    if isinstance(expr, cst.IfExp):
        yield from _evaluated(expr.test)
        return
    if isinstance(expr, cst.BooleanOperation):
        yield from _evaluated(expr.left)
        return
    for child in expr.children:
        yield from _evaluated(child)
