"""Whether a value is one JAX array (not a pytree of them, not a Python number), and the evidence short of proof
that a parameter or a library call's output holds one, on `ast` (JF102 reads it; `FileFacts.arrays`).

`value_kinds` follows a name through its reaching definitions: what jnp.stack, lax.scan and jax.vmap need is one
array. The evidence (`traced_argument`, `library_output`, `argument_evidence`) is what a rule may rely on only
where anything but an array fails loudly, or with an unsafe fix that names it: the classes `RecordedArray` and
`CalledArray` say so in a message (`evidence`). jaxfix/analysis/arrays.py (the LibCST rules' ArrayAnalysis) reads
these classes from here.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxfix.facts.flow import Parameter
from jaxfix.facts.knowledge.jax import ARRAY_METHODS, AT_METHODS
from jaxfix.facts.literals import is_number
from jaxfix.facts.summaries import by_method_name
from jaxfix.facts.traced import Kind
from jaxfix.facts.values import _at_base  # `x` of `x.at[i]`: one copy

# What a value may hold (`ArrayEvidence.value_kinds`): one JAX array, a Python number, or anything else.
ARRAY_VALUE, NUMBER, OTHER = "array", "number", "other"
VARYING = -1  # a parameter that held an array in every recorded call, of ranks that differ between calls

_AUGMENTED = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult, ast.Pow)  # as LibCST's `op=` that are arithmetic
_CONTAINERS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def describe(name: str, rank: int, calls: int) -> str:
    """`xs` was an array of rank 2 in every recorded call (3 distinct signatures): the recorder keeps each
    distinct signature once, so `calls` counts those, not the calls."""
    what = "an array" if rank == VARYING else f"an array of rank {rank}"
    signatures = "1 signature" if calls == 1 else f"{calls} distinct signatures"
    return f"`{name}` was {what} in every recorded call ({signatures})"


@dataclass(frozen=True)
class RecordedArray:
    """A parameter that a recorded run saw holding one array in every call (`ArrayEvidence.argument_evidence`)."""

    function: str
    name: str
    rank: int  # VARYING where the calls disagree
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
    """A parameter that every call in the project passes an array (`ArrayEvidence.argument_evidence`)."""

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


class ArrayEvidence:
    """The array facts of one file: `facts` is its FileFacts."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self.binder = facts.binder

    # ---- one array, not a pytree ---------------------------------------------------------------------------

    def value_kinds(
        self, expr: ast.AST, at: ast.stmt, rows: frozenset = frozenset(), seen: frozenset = frozenset(), calls=None
    ) -> frozenset:
        """What `expr`, evaluated at the statement `at`, may hold: ARRAY_VALUE (one JAX array), NUMBER (a Python
        number) or OTHER (a tuple, a list, anything unknown), as a set of those (== {ARRAY_VALUE}: surely one
        array). `rows` are names known to hold arrays (the rows a loop walks). Names follow their reaching
        definitions; a cycle through a loop holds if every way into it does."""
        kinds = lambda e: self.value_kinds(e, at, rows, seen, calls)  # noqa: E731
        purity = self.facts.purity
        kind = type(expr)
        if is_number(expr):
            return frozenset({NUMBER})
        if kind is ast.Name:
            if expr.id in rows:
                return frozenset({ARRAY_VALUE})
            facts = self.facts
            sources = facts.flow(facts.enclosing_function(at)).reaching(at, expr.id)
            if not sources or len(seen) > 12:
                return frozenset({ARRAY_VALUE if purity.is_array_like(expr) else OTHER})
            found: set[str] = set()
            for source in _in_source_order(sources):
                if source in seen:
                    continue
                if isinstance(source, Parameter):
                    found.add(ARRAY_VALUE if purity.is_array_like(expr) else OTHER)
                elif isinstance(source, ast.expr):
                    found |= self.value_kinds(source, self._statement_of(source), rows, seen | {source}, calls)
                elif type(source) is ast.AugAssign and type(source.target) is ast.Name:
                    if not isinstance(source.op, _AUGMENTED):
                        found.add(OTHER)
                    else:
                        found |= self._binary_kinds(source.target, source.op, source.value, source, rows, seen | {source}, calls)
                else:
                    found.add(OTHER)
            return frozenset(found) if found else frozenset({OTHER})
        if kind is ast.BinOp:
            return self._binary_kinds(expr.left, expr.op, expr.right, at, rows, seen, calls)
        if kind is ast.UnaryOp:
            if type(expr.op) is ast.Not:
                return frozenset({OTHER})
            inner = kinds(expr.operand)
            return frozenset({ARRAY_VALUE}) if ARRAY_VALUE in inner else inner  # -tuple raises
        if kind is ast.IfExp:
            return kinds(expr.body) | kinds(expr.orelse)
        if kind is ast.Subscript:
            return frozenset({ARRAY_VALUE}) if kinds(expr.value) == {ARRAY_VALUE} else frozenset({OTHER})
        if kind is ast.Attribute and expr.attr in ("T", "mT", "real", "imag"):
            return frozenset({ARRAY_VALUE}) if kinds(expr.value) == {ARRAY_VALUE} else frozenset({OTHER})
        if kind is ast.Call and type(expr.func) is ast.Attribute and self.binder.callee(expr) is None:
            receiver, method = expr.func.value, expr.func.attr
            base = _at_base(receiver)
            if method in AT_METHODS and method != "get" and base is not None:
                return frozenset({ARRAY_VALUE}) if kinds(base) == {ARRAY_VALUE} else frozenset({OTHER})
            if method in ARRAY_METHODS:
                return frozenset({ARRAY_VALUE}) if kinds(receiver) == {ARRAY_VALUE} else frozenset({OTHER})
        if purity.is_array_like(expr) or (calls is not None and kind is ast.Call and calls(expr)):
            return frozenset({ARRAY_VALUE})
        return frozenset({OTHER})

    def _binary_kinds(self, left, op, right, at, rows, seen, calls=None) -> frozenset:
        left = self.value_kinds(left, at, rows, seen, calls)
        right = self.value_kinds(right, at, rows, seen, calls)
        if left == {ARRAY_VALUE} or right == {ARRAY_VALUE}:
            return frozenset({ARRAY_VALUE})  # an array on either side makes an array (tuple + array too)
        union = left | right
        if OTHER not in union:
            return frozenset({ARRAY_VALUE}) if ARRAY_VALUE in union else frozenset({NUMBER})
        if type(op) in (ast.Add, ast.Mult):
            return frozenset({OTHER})  # tuples concatenate, an int repeats a tuple
        return frozenset({ARRAY_VALUE})  # other operators raise on tuples and lists

    def _statement_of(self, node: ast.AST) -> ast.AST:
        current = node
        parents = self.binder.parents
        while current is not None and not isinstance(current, ast.stmt):
            current = parents.get(current)
        return current if current is not None else node

    # ---- evidence, not proof ---------------------------------------------------------------------------------

    def _parameter(self, expr: ast.AST):
        """(function, parameter) for a name that is only ever a parameter (not `*args`/`**kwargs`, not annotated as
        anything but an array) of a def, else None."""
        if type(expr) is not ast.Name:
            return None
        owner = self.facts.values.owner(expr)
        if owner is None or owner.kind != "function":
            return None
        bindings = owner.bindings.get(expr.id, [])
        if len(bindings) != 1 or type(bindings[0].node) is not ast.arg:
            return None
        param = bindings[0].node
        parents = self.binder.parents
        function = parents.get(parents.get(param))
        if not isinstance(function, _DEFS) or param is function.args.vararg or param is function.args.kwarg:
            return None
        if param.annotation is not None and not self.facts.values.array_parameter(param):
            return None  # `xs: tuple[jax.Array, ...]`, `xs: list`: the code says what it is
        return function, param

    def traced_argument(self, expr: ast.AST) -> str | None:
        """Evidence from use, not proof: for a name that is only ever a non-static parameter of a function that
        a JAX transformation traces (`@jax.jit`, a lax body), the function's name; else None. JAX hands such a
        parameter a pytree of arrays: usually one array, but a tuple, list or dict may come in. So a rule may
        rely on it only where anything but an array fails loudly, as indexing it with a traced index does: a
        tuple or list raises TracerIntegerConversionError at trace time, a dict "unhashable type" (JAX 0.10.2,
        kept true by tests/test_evidence.py). Scanning or mapping over it would not: a tuple is a pytree
        there, walked leaf by leaf."""
        found = self._parameter(expr)
        if found is None:
            return None
        function, param = found
        traced = self.facts.traced
        if not traced.is_traced(function) or traced.seeded_kind(function, expr.id) is not Kind.TRACED:
            return None
        if self._passed_a_container(function, param):
            return None
        return function.name

    def _traced_parameter(self, expr: ast.AST):
        """(function, parameter, the function's qualified name) for a name that is only ever a non-static
        parameter of a traced function that the project index names."""
        found = self._parameter(expr)
        if found is None:
            return None
        function, param = found
        traced = self.facts.traced
        if not traced.is_traced(function) or traced.param_kind(function, expr.id) is not Kind.TRACED:
            return None
        qualname = next((q for q, node in self.binder.defs.items() if node is function), None)
        return (function, param, qualname) if qualname is not None else None

    def recorded_argument(self, expr: ast.AST) -> RecordedArray | None:
        """Evidence from a recorded run, not proof: for a name that is only ever a non-static parameter of a
        traced function which held one array in every call `jaxfix record` saw, what was recorded; else None.
        Another caller may pass a tuple, where scanning or mapping over the parameter would compute other values
        without an error: a rule that relies on this offers an unsafe fix that says so."""
        project = self.facts.project
        facts = getattr(project, "recorded", None) if project is not None else None
        found = self._traced_parameter(expr) if facts else None
        if found is None:
            return None
        function, param, qualname = found
        recorded = facts.get(qualname)
        if recorded is None:
            return None
        positional = [*function.args.posonlyargs, *function.args.args]
        if len(positional) != len(recorded.positional):
            return None  # recorded from another version of the function
        if any(p is param for p in positional):
            rank = recorded.positional[positional.index(param)]
        else:
            rank = recorded.keywords.get(param.arg)
        if rank is None or self._passed_a_container(function, param):
            return None
        return RecordedArray(function.name, param.arg, rank, recorded.calls)

    def called_argument(self, expr: ast.AST) -> CalledArray | None:
        """Evidence from the project's calls, not proof: for a name that is only ever a non-static parameter of a
        traced function which every call in the project passes an array, how many calls; else None."""
        project = self.facts.project
        facts = getattr(project, "called_with", None) if project is not None else None
        found = self._traced_parameter(expr) if facts else None
        if found is None:
            return None
        function, param, qualname = found
        sites = facts.get(qualname, {}).get(param.arg)
        if sites is None or self._passed_a_container(function, param):
            return None
        return CalledArray(function.name, param.arg, sites)

    def argument_evidence(self, expr: ast.AST) -> RecordedArray | CalledArray | None:
        """What shows `expr`, a parameter of a traced function, to hold an array short of proof: a recorded run,
        else the project's calls; None when neither does."""
        return self.recorded_argument(expr) or self.called_argument(expr)

    def library_output(self, expr: ast.AST) -> str | None:
        """Evidence from use, not proof, like `traced_argument`: for a name bound once in its scope, to the output
        of a library call that by convention returns one array (a Flax module's `model.apply(variables, x)`,
        `state.apply_fn(...)`, a Haiku `net.apply(params, x)`), that call's code (`model.apply(...)`); else None."""
        if type(expr) is not ast.Name:
            return None
        owner = self.facts.values.owner(expr)
        if owner is None or owner.kind in ("class", "builtins"):
            return None
        bindings = owner.bindings.get(expr.id, [])
        if len(bindings) != 1:
            return None
        value = self._bound_value(bindings[0].node)
        if type(value) is not ast.Call or self.array_output(value) is None:
            return None
        return f"{self.facts.purity.code(value.func)}(...)"

    def array_output(self, call: ast.Call) -> str | None:
        """Evidence, not proof: the summary by which `call` returns one array by convention (`model.apply(variables,
        x)` of a Flax module, `state.apply_fn(...)` by its name), or None; None too where a keyword the summary names
        is passed (`mutable=[...]` returns a tuple)."""
        found = self.facts.purity.summaries.summary_of(call) or by_method_name(call)
        if found is None or found[1].array_unless is None:
            return None
        for keyword in call.keywords:
            if keyword.arg is None:
                return None
            if keyword.arg in found[1].array_unless:
                value = keyword.value
                if not (type(value) is ast.Constant and (value.value is False or value.value is None)):
                    return None
        return found[0]

    def _passed_a_container(self, function: ast.AST, param: ast.arg) -> bool:
        """Whether a call of `function` by name in this module passes a list, tuple, dict or set display or
        comprehension for `param` (directly, or through a name bound only to one)."""
        binder = self.binder
        scope = binder.scope_of.get(function)
        if scope is None:
            return False
        positional = [*function.args.posonlyargs, *function.args.args]
        position = next((i for i, p in enumerate(positional) if p is param), None)
        for reference in binder.references(scope, function.name):
            call = binder.parents.get(reference)
            if type(call) is not ast.Call or call.func is not reference:
                continue
            plain = [a for a in call.args if type(a) is not ast.Starred]
            passed = [k.value for k in call.keywords if k.arg == param.arg]
            if position is not None and position < len(plain):
                passed.append(plain[position])
            for value in passed:
                if isinstance(value, _CONTAINERS):
                    return True
                if type(value) is ast.Name:
                    owner = self.facts.values.owner(value)
                    bound = owner.bindings.get(value.id, []) if owner is not None else []
                    values = [self._bound_value(b.node) for b in bound]
                    if values and all(isinstance(v, _CONTAINERS) for v in values):
                        return True
        return False

    def _bound_value(self, node: ast.AST) -> ast.AST | None:
        """The value of `name = value` or `name: T = value` for the stored name `node`, else None."""
        parent = self.binder.parents.get(node) if type(node) is ast.Name else None
        if type(parent) is ast.Assign and any(t is node for t in parent.targets):
            return parent.value
        if type(parent) is ast.AnnAssign and parent.target is node:
            return parent.value
        return None


def _in_source_order(sources) -> list:
    """Reaching definitions in one fixed order (the LibCST side iterates a set; only the union matters here, but
    the `seen` cut-off makes the order of a deep cycle matter)."""
    def key(source):
        node = getattr(source, "node", source)
        return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))

    return sorted(sources, key=key)
