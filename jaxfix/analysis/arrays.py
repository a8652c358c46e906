"""Which local names are known to hold a JAX array, and whether that array is theirs alone.

A name holds a JAX array only if EVERY binding of it in its scope makes one: a call from an allowlist of
`jax.numpy`/`jax.random` functions that always return a single array, `x.at[i].set(v)`, arithmetic of known
arrays and numbers, indexing, `.T`/`.reshape(...)`/`.astype(...)` of a known array, or a parameter annotated
`jax.Array`/`jnp.ndarray`. Anything else (NumPy arrays, lists, dicts, unannotated parameters, `for`/`with`
targets, `global`/`nonlocal` rebinding) leaves the name unproven. The analysis is flow-insensitive: each
property is the greatest set of names closed under their bindings. Two refinements use the same machinery:
"at run time" trusts an annotation only where JAX traces every call (elsewhere a caller may pass a NumPy
array), and "inexact" proves float/complex dtypes, so that `x[i] /= 2` cannot meet an integer array.

Codemods that turn an in-place update into a rebinding (`x[i] = v` into `x = x.at[i].set(v)`) also need to know
that nothing else refers to the same array: NumPy would change every reference, a rebinding changes only `x`.
`rebind_blocker` says what stops that, in words a diagnostic can show.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from functools import cached_property
from typing import Iterator

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
from jaxfix.analysis.recording import describe
from jaxfix.analysis.summaries import array_output
from jaxfix.analysis.syntax import AT_METHODS, at_base, is_number
from jaxfix.analysis.traced import LAX_BODIES, Kind
from jaxfix.facts.knowledge import jaxtyping
from jaxfix.facts.knowledge.jax import ALWAYS_TRACING as _ALWAYS_TRACING, LOUD_FUNCTIONS  # noqa: F401
from jaxfix.facts.knowledge.jax import FRESH_ARRAY_FUNCTIONS as _FRESH_FUNCTIONS, RANDOM_SAMPLERS as _RANDOM
from jaxfix.facts.knowledge.jax import DTYPE_POSITION, RANDOM_FLOAT_DTYPE_POSITION as _RANDOM_INEXACT_DTYPE
from jaxfix.facts.knowledge.jax import VIEW_ARRAY_FUNCTIONS as _VIEW_FUNCTIONS
from jaxfix.facts.knowledge.jax import FRESH_ARRAY_METHODS as _FRESH_METHODS, VIEW_ARRAY_METHODS as _VIEW_METHODS
from jaxfix.facts.knowledge.jax import VIEW_ARRAY_ATTRIBUTES as _VIEW_ATTRIBUTES
from jaxfix.facts.knowledge.tables import ARRAY_ANNOTATIONS, TRACED_ARRAY_ANNOTATIONS
from jaxfix.facts.model import ModuleModel

_JNP = "jax.numpy."

_STATIC_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "nbytes", "itemsize", "sharding", "weak_type"})
# Builtins that read an argument without keeping a reference to it.
_NON_RETAINING_BUILTINS = frozenset("print len float int bool str repr isinstance type id hash format".split())
_NON_RETAINING_CALLS = frozenset(
    {"jax.debug.print", _JNP + "shape", _JNP + "ndim", _JNP + "size", _JNP + "result_type"}
)
_NON_RETAINING_METHODS = frozenset({"item", "tolist"})
_INT_BUILTINS = frozenset({"len", "int"})
_ARITHMETIC = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power, cst.MatrixMultiply,
    cst.BitAnd, cst.BitOr, cst.BitXor, cst.LeftShift, cst.RightShift,
)  # fmt: skip
_INT_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
_INEXACT_ARITHMETIC = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power, cst.MatrixMultiply,
)  # fmt: skip
# Properties of names: a JAX array (trusting `jax.Array` annotations), a JAX array even where a caller breaks
# an annotation (at run time), a floating-point or complex JAX array.
_ARRAY, _RUNTIME, _INEXACT = "array", "runtime", "inexact"

# Which arrays hold floating-point (or complex) numbers, so that `x[i] /= v` cannot meet an integer array.
_INEXACT_DTYPE_NAMES = frozenset("float16 float32 float64 bfloat16 complex64 complex128 float complex".split())
_FLOAT_BY_DEFAULT = frozenset("zeros ones empty eye identity linspace logspace geomspace".split())
_ALWAYS_INEXACT = frozenset(
    """
    exp exp2 expm1 log log1p log2 log10 sqrt cbrt sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh mean std var
    divide true_divide hypot logaddexp nanmean interp linalg.norm linalg.inv linalg.det linalg.solve linalg.pinv
    linalg.cholesky
    """.split()
)
_DTYPE_KEEPING_FUNCTIONS = frozenset(
    """
    copy reshape ravel transpose swapaxes moveaxis squeeze expand_dims broadcast_to flip fliplr flipud rot90 roll tile
    repeat pad sort cumsum cumprod abs absolute negative clip maximum minimum sum prod max min amax amin take diff
    diagonal tril triu trace nansum zeros_like ones_like empty_like full_like
    """.split()
)
_DTYPE_KEEPING_METHODS = frozenset("copy flatten sum prod max min cumsum cumprod clip round conj".split())
_RANDOM_INEXACT = frozenset(_RANDOM_INEXACT_DTYPE)

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


@dataclass(frozen=True)
class RecordedArray:
    """A parameter that a recorded run saw holding one array in every call (ArrayAnalysis.recorded_argument)."""

    function: str
    name: str
    rank: int  # recording.VARYING where the calls disagree
    calls: int  # distinct signatures recorded

    def evidence(self) -> str:
        """What a message says of it: `evidence: a recorded run: `xs` was an array of rank 2 in every recorded call
        (3 distinct signatures); not proven: check with `jaxfix apply --verify``."""
        return (
            f"evidence: a recorded run (`jaxfix record`): {describe(self.name, self.rank, self.calls)} of "
            f"`{self.function}`; not proven for other callers: check with `jaxfix apply --verify`"
        )


@dataclass(frozen=True)
class CalledArray:
    """A parameter that every call in the project passes an array (ArrayAnalysis.called_argument)."""

    function: str
    name: str
    sites: int  # the calls in the project that reach the function

    def evidence(self) -> str:
        """What a message says of it: `evidence: every call of `encode` in the project passes an array for `xs`
        (2 call sites); not proven for callers outside it: check with `jaxfix apply --verify``."""
        sites = "1 call site" if self.sites == 1 else f"{self.sites} call sites"
        return (
            f"evidence: every call of `{self.function}` in the project passes an array for `{self.name}` ({sites}); "
            "not proven for callers outside it: check with `jaxfix apply --verify`"
        )


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

    def is_integer(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` is a Python int (so, as an index, it names one position and never repeats one)."""
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self.is_integer(expr.expression)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _INT_ARITHMETIC):
            return self.is_integer(expr.left) and self.is_integer(expr.right)
        if isinstance(expr, cst.Call):
            return self._builtin(expr.func) in _INT_BUILTINS
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in ("ndim", "size") and self.is_array_expression(expr.value)
        if isinstance(expr, cst.Subscript):  # x.shape[0]
            return (
                isinstance(expr.value, cst.Attribute)
                and expr.value.attr.value == "shape"
                and self.is_array_expression(expr.value.value)
                and len(expr.slice) == 1
                and isinstance(expr.slice[0].slice, cst.Index)
                and isinstance(expr.slice[0].slice.value, (cst.Integer, cst.UnaryOperation))
            )
        if isinstance(expr, cst.Name):
            owner = self.owner(expr)
            if owner is None or isinstance(owner, ClassScope) or (owner, expr.value) in self._deciding_integer:
                return False  # unbound, a class attribute, or defined only in terms of itself
            self._deciding_integer.add((owner, expr.value))
            try:
                bindings = list(owner.assignments[expr.value])
                return bool(bindings) and all(self._binds_integer(b) for b in bindings)
            finally:
                self._deciding_integer.discard((owner, expr.value))
        return False

    def rebind_blocker(self, name: cst.Name, statement: cst.BaseSmallStatement) -> str | None:
        """Why rebinding `name` at `statement` (`x = x.at[i].set(v)` for `x[i] = v`) would not do what NumPy's
        in-place update does, or None when it would. NumPy changes the array itself, so every other reference
        to it sees the update; a rebinding changes only this name. None requires that the name is local to the
        statement's scope, that each of its bindings makes a new array nobody else holds, and that no reference
        that could outlive an expression (another name, a container, a closure, an unknown callee) is taken
        before the update."""
        x = name.value
        owner = self.owner(name)
        if owner is None or self._scopes.get(statement) is not owner:
            return f"`{x}` belongs to an enclosing scope, so rebinding it here would make it a new local name"
        if x not in self._solve(owner, _RUNTIME):
            return (
                f"`{x}` is known to be a JAX array only through a `jax.Array` annotation in a function that may run "
                "untraced: given a NumPy array instead, the original updates it in place and the rewrite would fail"
            )
        for assignment in owner.assignments[x]:
            reason = self._binding_blocker(assignment, statement)
            if reason is not None:
                return reason
        escaping = [r for r in self._reads(owner, x) if self._escapes(r, owner) and self._may_run_before(r, statement, owner)]
        if escaping:  # the first in the file: scopes keep their accesses in sets, whose order varies between runs
            read = min(escaping, key=lambda r: (self._positions[r].start.line, self._positions[r].start.column))
            line = self._positions[read].start.line
            return (
                f"`{x}` is also referenced on line {line} (`{self._snippet(read)}`) before this update; in NumPy "
                "that reference would see the update, after a rebinding it would not"
            )
        return None

    # ---- which names hold arrays ---------------------------------------------------------------------------

    def _solve(self, owner: Scope, prop: str) -> set[str]:
        """The names of `owner` proven to have `prop` (_ARRAY, _RUNTIME or _INEXACT): the greatest set of names
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
        if prop == _ARRAY:
            env = set(candidates) - self._comprehension_walrus_targets(owner)
        else:
            env = set(self._solve(owner, _ARRAY))  # both refine the proven arrays
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
            if prop == _INEXACT or not self._array_param(node):
                return False  # an annotation says nothing of the dtype
            # At run time a parameter is sure to be a JAX array only where JAX traces every call.
            return prop == _ARRAY or self._always_traced(self._enclosing_function(node), node.name.value)
        parent = self._parents.get(node)
        value = None
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            value = self._parents[parent].value
        elif isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.target is node:
            if parent.value is None:
                return True  # a bare annotation binds nothing
            value = parent.value
        elif isinstance(parent, cst.AugAssign) and parent.target is node:
            if prop == _INEXACT:  # the name is an inexact array already; arithmetic keeps it inexact
                return isinstance(parent.operator, tuple(_augmented(op) for op in _INEXACT_ARITHMETIC))
            return isinstance(parent.operator, tuple(_augmented(op) for op in _ARITHMETIC)) and self._array_or_number(
                parent.value, owner, env, prop
            )
        if value is None:
            return False  # for/with/except targets, unpacking, def, class
        if prop == _INEXACT:
            return self._is_array(value, None, None) and self._is_inexact(value, owner, env)
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

    def _is_inexact(self, expr: cst.BaseExpression, owner: Scope | None, env: set[str] | None) -> bool:
        """Whether an expression (an array, or a number operand) is known to be floating-point or complex."""
        inexact = lambda e: self._is_inexact(e, owner, env)  # noqa: E731
        if isinstance(expr, (cst.Float, cst.Imaginary)):
            return True
        if isinstance(expr, cst.Name):
            return self._name_has(expr, owner, env, _INEXACT)
        if isinstance(expr, cst.Call):
            callee = self.callee(expr)
            if callee is not None:
                return self._array_call(callee, expr) and self._inexact_call(callee, expr, inexact)
            method = _method(expr)
            if method is None:
                return False
            base, name = method
            if name in AT_METHODS and _at_base(base) is not None:
                return name == "divide" or inexact(_at_base(base))  # `.at[i].divide` makes an integer array float
            if name == "astype":
                return bool(expr.args) and self._inexact_dtype(expr.args[0].value)
            if name in ("mean", "std", "var"):
                return True
            return (name in _VIEW_METHODS or name in _DTYPE_KEEPING_METHODS) and inexact(base)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in _VIEW_ATTRIBUTES and inexact(expr.value)
        if isinstance(expr, cst.Subscript):
            return inexact(expr.value)
        if isinstance(expr, cst.BinaryOperation):
            if not isinstance(expr.operator, _INEXACT_ARITHMETIC):
                return False
            return isinstance(expr.operator, cst.Divide) or inexact(expr.left) or inexact(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return isinstance(expr.operator, (cst.Minus, cst.Plus)) and inexact(expr.expression)
        if isinstance(expr, cst.IfExp):
            return inexact(expr.body) and inexact(expr.orelse)
        if isinstance(expr, cst.NamedExpr):
            return inexact(expr.value)
        return False

    def _inexact_call(self, callee: str, call: cst.Call, inexact) -> bool:
        if any(a.star for a in call.args):
            return False
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        position = DTYPE_POSITION.get(callee)
        dtype = keywords.get("dtype")
        if dtype is None and position is not None and len(positional) > position:
            dtype = positional[position]
        if dtype is not None:
            return self._inexact_dtype(dtype)
        short = callee[len(_JNP) :] if callee.startswith(_JNP) else None
        if callee in _RANDOM:
            return callee in _RANDOM_INEXACT
        if short in _FLOAT_BY_DEFAULT or short in _ALWAYS_INEXACT:
            return True
        if short == "full":
            fill = keywords.get("fill_value", positional[1] if len(positional) > 1 else None)
            return fill is not None and inexact(fill)
        if short == "where":
            return inexact(positional[1]) or inexact(positional[2])
        if short in ("arange", "array", "asarray"):
            if any(_has_float_literal(p) for p in positional):
                return True
            return short != "arange" and bool(positional) and inexact(positional[0])
        if short in ("concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"):
            first = positional[0] if positional else None
            return isinstance(first, (cst.List, cst.Tuple)) and any(inexact(e.value) for e in first.elements)
        if short in _DTYPE_KEEPING_FUNCTIONS:
            return bool(positional) and inexact(positional[0])
        return False

    def _inexact_dtype(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.SimpleString):
            return expr.evaluated_value in _INEXACT_DTYPE_NAMES
        if isinstance(expr, cst.Name) and expr.value in ("float", "complex"):
            return self._builtin(expr) is not None
        name = self.qualified(expr)
        if name is None or name.split(".")[0] not in ("jax", "numpy"):
            return False
        return name.rsplit(".", 1)[-1] in _INEXACT_DTYPE_NAMES

    def is_inexact(self, name: cst.Name) -> bool:
        """Whether `name` is known to hold a floating-point or complex JAX array."""
        owner = self.owner(name)
        return owner is not None and name.value in self._solve(owner, _INEXACT)

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

    def _binds_integer(self, assignment) -> bool:
        """`for i in range(...)` or `i = <int expression>`."""
        node = getattr(assignment, "node", None)
        if not isinstance(assignment, Assignment) or self._scopes.get(node) is not assignment.scope:
            return False
        parent = self._parents.get(node)
        if isinstance(parent, cst.For) and parent.target is node:
            return isinstance(parent.iter, cst.Call) and self._builtin(parent.iter.func) == "range"
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            return self.is_integer(self._parents[parent].value)
        if isinstance(parent, cst.AugAssign) and parent.target is node:  # `i += 1`
            return isinstance(parent.operator, tuple(_augmented(op) for op in _INT_ARITHMETIC)) and self.is_integer(
                parent.value
            )
        return False

    # ---- who else holds the array --------------------------------------------------------------------------

    def _binding_blocker(self, assignment, statement: cst.CSTNode) -> str | None:
        node = assignment.node
        x = assignment.name
        if isinstance(node, cst.Param):  # traced on every call, or _RUNTIME would not hold
            owner = assignment.scope
            if not any(self._may_run_after(r, statement, owner) for r in self._plain_reads(owner, x)):
                return (
                    f"`{x}` is a parameter and is not read after this update: the caller expected the array changed "
                    "in place, and a rebinding would silently drop the update (return it instead)"
                )
            return None
        parent = self._parents.get(node)
        if isinstance(parent, cst.AugAssign) or (isinstance(parent, cst.AnnAssign) and parent.value is None):
            return None  # `x += v` makes a new array from x's own; a bare annotation binds nothing
        if isinstance(parent, cst.NamedExpr):
            return f"`{x}` is bound by `:=`, whose value is also used where it stands; in NumPy both see the update"
        if isinstance(parent, cst.AssignTarget):
            assign = self._parents[parent]
            if len(assign.targets) > 1:
                shown = self._snippet(assign)
                return f"`{x}` is bound together with another name (`{shown}`); in NumPy both would see the update"
            value = assign.value
        else:
            value = parent.value
        if not self._is_fresh(value):
            return (
                f"`{x}` is bound to `{self._snippet(value, whole_statement=False)}`, which may share memory with "
                "another array; in NumPy the update would change that array too"
            )
        return None

    def _always_traced(self, function: cst.FunctionDef | None, param: str) -> bool:
        """Whether `param` is a traced value on every call of `function`: the function is decorated with a JAX
        transformation, or it is private (nested, or named `_...`) and only ever handed to one
        (`lax.fori_loop(0, n, body, x)`), never called directly, where a NumPy array could come in."""
        traced = self._context.traced
        if function is None or not traced.is_traced(function) or traced.param_kind(function, param) is not Kind.TRACED:
            return False
        if any(self._is_transform(d.decorator, _ALWAYS_TRACING) for d in function.decorators):
            return True
        scope = self._scopes.get(function)
        if not (isinstance(scope, FunctionScope) or function.name.value.startswith("_")) or scope is None:
            return False
        handed = _ALWAYS_TRACING | set(LAX_BODIES)
        references = [r for a in scope.assignments[function.name.value] for r in a.references]
        for reference in references:
            arg = self._parents.get(reference.node)
            call = self._parents.get(arg)
            if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and self.callee(call) in handed):
                return False
        return bool(references)

    def _is_transform(self, decorator: cst.BaseExpression, transforms) -> bool:
        """`@jax.jit`, `@jax.jit(...)`, `@partial(jax.jit, ...)`."""
        if self.qualified(decorator) in transforms:
            return True
        if isinstance(decorator, cst.Call):
            callee = self.callee(decorator)
            if callee in transforms:
                return True
            if callee == "functools.partial" and decorator.args:
                return self.qualified(decorator.args[0].value) in transforms
        return False

    def _is_fresh(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` makes an array that no other value shares: in NumPy's terms a copy, or a view of
        something only this expression holds (`jnp.arange(6.0).reshape(2, 3)`), never a view of a name."""
        if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation, cst.List, cst.Tuple, cst.Integer, cst.Float)):
            return True
        if isinstance(expr, cst.IfExp):
            return self._is_fresh(expr.body) and self._is_fresh(expr.orelse)
        if isinstance(expr, cst.Subscript):
            return self._is_fresh(expr.value)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in _VIEW_ATTRIBUTES and self._is_fresh(expr.value)
        if not isinstance(expr, cst.Call):
            return False  # a name: the array it holds has another reference
        callee = self.callee(expr)
        if callee is not None:
            if callee in _RANDOM:
                return True
            if callee in _VIEW_FUNCTIONS or not _copies(expr):
                return bool(expr.args) and expr.args[0].keyword is None and self._is_fresh(expr.args[0].value)
            return callee in _FRESH_FUNCTIONS
        method = _method(expr)
        if method is None:
            return False
        base, name = method
        if name in AT_METHODS and _at_base(base) is not None:
            return True
        if name in _VIEW_METHODS or (name in _FRESH_METHODS and not _copies(expr)):
            return self._is_fresh(base)
        return name in _FRESH_METHODS

    def _reads(self, owner: Scope, x: str) -> Iterator[cst.Name]:
        """Every load of the name `x` that refers to `owner`'s binding, from any scope."""
        for access in self._accesses_by_name.get(x, ()):
            if access.is_annotation or not isinstance(access.node, cst.Name):
                continue
            assignments = access.scope[x]
            if assignments and next(iter(assignments)).scope is owner:
                yield access.node

    def _plain_reads(self, owner: Scope, x: str) -> Iterator[cst.Name]:
        """Reads that use the value, as opposed to the base of an item assignment `x[i] = v` / `x[i] += v`."""
        for read in self._reads(owner, x):
            node = read
            while isinstance(self._parents.get(node), cst.Subscript) and self._parents[node].value is node:
                node = self._parents[node]
            parent = self._parents.get(node)
            if node is not read and (
                (isinstance(parent, cst.AssignTarget) and parent.target is node)
                or (isinstance(parent, cst.AugAssign) and parent.target is node)
            ):
                continue
            yield read

    def _escapes(self, read: cst.Name, owner: Scope) -> bool:
        """Whether this read may leave a reference to the array (or a NumPy view of it) behind: in another name,
        a container, a closure, a default value or an unknown callee. Reads consumed on the spot (arithmetic,
        reductions, `.shape`, indexing with it, returning it) leave none."""
        scope = self._scopes.get(read)
        while scope is not None and scope is not owner:
            if isinstance(scope, FunctionScope):
                return True  # a closure: it may run at any time
            scope = scope.parent if scope.parent is not scope else None
        node: cst.CSTNode = read
        while True:
            parent = self._parents.get(node)
            if isinstance(parent, cst.Subscript) and parent.value is node:
                node = parent
            elif isinstance(parent, (cst.Index, cst.Slice, cst.FormattedStringExpression, cst.ComparisonTarget)):
                return False
            elif isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
                return False
            elif isinstance(parent, cst.Attribute) and parent.value is node:
                attribute = parent.attr.value
                if attribute in _STATIC_ATTRIBUTES or attribute == "at":
                    return False
                call = self._parents.get(parent)
                if isinstance(call, cst.Call) and call.func is parent:
                    if (attribute in _FRESH_METHODS and _copies(call)) or attribute in _NON_RETAINING_METHODS:
                        return False
                    if attribute not in _VIEW_METHODS and attribute not in _FRESH_METHODS:
                        return True
                    node = call
                elif attribute in _VIEW_ATTRIBUTES:
                    node = parent
                else:
                    return True
            elif isinstance(parent, cst.BooleanOperation):
                node = parent
            elif isinstance(parent, cst.IfExp):
                if parent.test is node:
                    return False
                node = parent
            elif isinstance(parent, (cst.Element, cst.DictElement)) and not isinstance(parent, cst.StarredElement):
                node = self._parents[parent]  # the container now holds it
            elif isinstance(parent, cst.Arg) and parent.value is node and not parent.star:
                call = self._parents.get(parent)
                callee = self.callee(call) if isinstance(call, cst.Call) else None
                if callee in _RANDOM or callee in _NON_RETAINING_CALLS:
                    return False
                if callee in _FRESH_FUNCTIONS and _copies(call):
                    return False
                if isinstance(call, cst.Call) and self._builtin(call.func) in _NON_RETAINING_BUILTINS:
                    return False
                if callee in _VIEW_FUNCTIONS or callee in _FRESH_FUNCTIONS:
                    node = call
                else:
                    return True
            elif isinstance(parent, (cst.Return, cst.Expr)):
                return False
            elif isinstance(parent, (cst.If, cst.While, cst.Assert, cst.Del)):
                return False  # a truth value, an assertion message, `del x`
            elif isinstance(parent, cst.AssignTarget) and parent.target is node:
                return False  # `x[i] = ...`: a store into the array, not a new reference
            elif isinstance(parent, cst.AugAssign):  # `y += x` computes with x's data; `x += 1` reads x itself
                target = parent.target
                return parent.target is not node and not (
                    self._stores_into_array(target) or (isinstance(target, cst.Name) and self.is_array(target))
                )
            elif isinstance(parent, cst.Assign) and parent.value is node:
                return not all(self._stores_into_array(t.target) for t in parent.targets)
            else:
                return True

    def _stores_into_array(self, target: cst.BaseExpression) -> bool:
        """`a[i] = value` with `a` a known array copies `value`'s data: no reference to it is kept."""
        if not isinstance(target, cst.Subscript):
            return False
        while isinstance(target, cst.Subscript):
            target = target.value
        return isinstance(target, cst.Name) and self.is_array(target)

    # ---- order of execution --------------------------------------------------------------------------------

    def _may_run_before(self, node: cst.CSTNode, statement: cst.CSTNode, owner: Scope) -> bool:
        """Whether `node` may run before `statement` completes: it comes earlier, is part of it, or shares a loop."""
        return self._start(node) < self._end(statement) or self._share_loop(node, statement, owner)

    def _may_run_after(self, node: cst.CSTNode, statement: cst.CSTNode, owner: Scope) -> bool:
        return self._start(node) >= self._end(statement) or self._share_loop(node, statement, owner)

    def _start(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self._positions[node].start
        return where.line, where.column

    def _end(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self._positions[node].end
        return where.line, where.column

    def _share_loop(self, a: cst.CSTNode, b: cst.CSTNode, owner: Scope) -> bool:
        return bool(self._loops(a, owner) & self._loops(b, owner))

    def _loops(self, node: cst.CSTNode, owner: Scope) -> set[int]:
        boundary = getattr(owner, "node", None)
        loops = set()
        current = self._parents.get(node)
        while current is not None and current is not boundary:
            if isinstance(current, (cst.For, cst.While)):
                loops.add(id(current))
            current = self._parents.get(current)
        return loops

    # ---- small helpers -------------------------------------------------------------------------------------

    @cached_property
    def _positions(self):
        return self._context.positions

    @cached_property
    def _all_scopes(self) -> list[Scope]:
        return list({id(s): s for s in self._scopes.values() if s is not None}.values())

    @cached_property
    def _accesses_by_name(self) -> dict[str, list]:
        index: dict[str, list] = {}
        for scope in self._all_scopes:
            for access in scope.accesses:
                if isinstance(access.node, cst.Name):
                    index.setdefault(access.node.value, []).append(access)
        return index

    def _builtin(self, node: cst.CSTNode) -> str | None:
        """The builtin a bare name refers to (`range`, `len`), or None when it is anything else."""
        if isinstance(node, cst.Name) and self._names.is_builtin(node, node.value):
            return node.value
        return None

    def _enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        current = self._parents.get(node)
        while current is not None and not isinstance(current, cst.FunctionDef):
            current = self._parents.get(current)
        return current

    def _snippet(self, node: cst.CSTNode, limit: int = 60, *, whole_statement: bool = True) -> str:
        """Short source text for a message: the small statement around `node`, or a compound one's header."""
        chosen = node
        if whole_statement:
            while not isinstance(chosen, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Module)):
                parent = self._parents.get(chosen)
                if parent is None:
                    break
                chosen = parent
            if isinstance(chosen, cst.Module):
                chosen = node
        if isinstance(chosen, cst.BaseCompoundStatement):  # its header: `for row in x`
            text = self._context.code_for(chosen.with_changes(leading_lines=())).strip().splitlines()[0].rstrip(":")
        else:
            text = self._context.code_for(chosen).strip()
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


def _augmented(operator: type) -> type:
    return getattr(cst, operator.__name__ + "Assign")


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


def _has_float_literal(expr: cst.BaseExpression) -> bool:
    """`2.0`, `-1.5`, `[1, 2.0]`: a literal that makes `jnp.array`/`jnp.arange` floating-point."""
    if isinstance(expr, (cst.Float, cst.Imaginary)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return _has_float_literal(expr.expression)
    if isinstance(expr, (cst.List, cst.Tuple)):
        return any(_has_float_literal(e.value) for e in expr.elements)
    return False


def _has_out(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value == "out" for a in call.args)


def _copies(call: cst.Call) -> bool:
    """False when `copy=` is passed and is not literally True (`jnp.array(y, copy=False)` may return `y`)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "copy":
            return isinstance(arg.value, cst.Name) and arg.value.value == "True"
    return True


# Uses of a value that raise when it is a tuple, list or dict of arrays rather than one array (JAX 0.10.2,
# kept true by tests/test_evidence.py): a rewrite that maps over a pytree where the loop walked a container's
# elements then fails at trace time instead of computing something else.
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
