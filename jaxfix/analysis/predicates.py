"""Whether a value in traced code is surely a JAX tracer, and whether a truth test on it surely fails.

`if x > 0:` fails under `jax.jit` (TracerBoolConversionError) exactly when `x` is a tracer there. TracedAnalysis
says TRACED when a value *may* depend on a traced argument: right for "may this need staging", not enough for a
branch rewrite, which would turn `if n > 0:` on a Python int computed at trace time (a static configuration
that works) into a `lax.cond`. Real code is full of such tests, so this module proves tracers from the code:

- a call into `jax.numpy`/`jax.lax`/`jax.nn`/`jax.random`/... that returns one array (not `jnp.shape`, not a
  tuple-returning `jnp.linalg.eigh`), an array method of a tracer (`x.sum()`), arithmetic, comparisons and
  indexing with a tracer operand (a string operand aside: `"%d" % x` is a string);
- a name, when every binding that reaches the use is one (flow-sensitive: `m = None` then `m = jnp.ones(3)`
  is a tracer after the second binding only);
- a parameter without a default (an omitted default is never traced, `jit` passes it as is), not `*args`
  or `**kwargs`, that a transformation or a lax primitive traces directly (TracedAnalysis's seeds), or that
  every call from traced code binds to a tracer.
Attributes (`state.count`, `self.flag`) are never proven: a pytree field may be static (flax's
`struct.field(pytree_node=False)`, an equinox static field).

A truth test (`if t:`, `while t:`, `not t`, `t and u`) surely fails when its value is a tracer. A bare name,
attribute or subscript needs one more fact, since the truth of a tuple or a dict is a Python bool: evidence
that it holds an array (ArrayAnalysis, or a use only arrays allow). So does `a == b`, which compares tuples
and dicts by structure, unless the other side is a number.
"""

from __future__ import annotations

import enum

import libcst as cst

from jaxfix.analysis.carry import unpacked
from jaxfix.analysis.dataflow import (
    ARRAY_METHODS,
    UNDEFINED,
    Parameter,
    activity,
)
from jaxfix.analysis.syntax import body_statements, is_none, is_number, walk
from jaxfix.analysis.traced import ARRAY_NAMESPACES, STATIC_CALLS, Kind
from jaxfix.facts.knowledge.jax import BOOLEAN_RESULT as _BOOLEAN_CALLS, NOT_ONE_ARRAY as _NOT_ONE_ARRAY
from jaxfix.facts.knowledge.jax import NOT_ONE_ARRAY_PREFIXES as _NOT_ONE_ARRAY_PREFIXES
from jaxfix.facts.knowledge.tables import ARRAY_ANNOTATION_NAMES, BARE_ARRAY_ANNOTATION_NAMES
from jaxfix.facts.model import ModuleModel

_COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
_CONTAINERS = (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp)
_BOOLEAN_METHODS = frozenset({"all", "any"})
_TEXT_BUILTINS = frozenset({"str", "repr", "format", "ascii"})


class Truth(enum.Enum):
    """What Python's truth test of an expression does in traced code."""

    TRACED = "traced"  # surely raises TracerBoolConversionError, and every `and`/`or`/`not` part is traced
    MIXED = "mixed"  # surely raises, but an `and`/`or` also has static parts, which Python short-circuits
    OTHER = "other"  # static, unknown, or not proven: stays Python


class PredicateAnalysis:
    def __init__(self, context: ModuleModel) -> None:
        self._context = context
        self._traced = context.traced
        self._names = context.names

    # ---- queries -------------------------------------------------------------------------------------------

    def tracer(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` surely evaluates to a traced JAX array where it stands."""
        return self._tracer(expr, frozenset())

    def traced_tree(self, expr: cst.BaseExpression) -> bool:
        """Whether every leaf of `expr`'s value is surely a tracer where it stands: a tracer, or an item of one
        (`batch["x"]`, `carry[0]`), since a pytree's lists, tuples and dicts hold only leaves and subtrees, which a
        transformation traces alike. An attribute is not (`model.dim`: a pytree class's field may be static), nor
        `str(x)` (a trace-time string)."""
        while isinstance(expr, cst.Subscript):
            if self.tracer(expr):
                return True
            expr = expr.value
        return self.tracer(expr)

    def static_suspect(self, expr: cst.BaseExpression) -> str | None:
        """Why `expr`, a value that depends on a traced one but is not proven a tracer, may well be a Python value
        at trace time, in words a message can show; None where its code suggests nothing of the kind (the result
        of a call on tracers, say). A field of a pytree may be static (`model.dim`, an NNX module's Python int, a
        flax.struct `pytree_node=False` field: the parameter is a tree, its attributes are not all leaves), and a
        string built from a tracer (`str(x)`, an f-string) is text made at trace time."""
        while isinstance(expr, cst.Subscript) or (
            isinstance(expr, cst.Attribute) and expr.attr.value in ("T", "mT", "real", "imag")
        ):
            expr = expr.value
        if isinstance(expr, cst.Attribute):
            return (
                "an attribute: a pytree's static fields (an NNX module's Python int, a `pytree_node=False` field) "
                "are Python values at trace time"
            )
        text = isinstance(expr, _STRINGS) or (
            isinstance(expr, cst.BinaryOperation) and isinstance(expr.left, _STRINGS)  # `"%s" % x`, `"x=" + s`
        )
        if text or (isinstance(expr, cst.Call) and any(self._names.is_builtin(expr.func, n) for n in _TEXT_BUILTINS)):
            return "a string made at trace time, which shows a tracer"
        return None

    def test(self, expr: cst.BaseExpression) -> Truth:
        """What `if expr:` (or `while`, `not`, `and`/`or`) does under tracing: see `Truth`."""
        if isinstance(expr, cst.BooleanOperation):
            parts = [self.test(part) for part in (expr.left, expr.right)]
            if all(part is Truth.TRACED for part in parts):
                return Truth.TRACED
            # Python evaluates the left operand first: if it is a tracer, the test fails whatever follows.
            return Truth.MIXED if parts[0] is not Truth.OTHER else Truth.OTHER
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return self.test(expr.expression)
        if isinstance(expr, cst.Comparison):
            return Truth.TRACED if self._traced_comparison(expr, frozenset()) else Truth.OTHER
        if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
            return Truth.TRACED if self.tracer(expr) and self.array_evidence(expr) else Truth.OTHER
        return Truth.TRACED if self.tracer(expr) else Truth.OTHER

    def boolean(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` surely is a traced boolean array (so that `and`/`or`/`not` on it mean
        `jnp.logical_and`/`logical_or`/`logical_not` in any context, not only in a truth test)."""
        if isinstance(expr, cst.BooleanOperation):
            return self.boolean(expr.left) and self.boolean(expr.right)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            return self.boolean(expr.expression)
        if isinstance(expr, cst.Comparison):
            return self._traced_comparison(expr, frozenset())
        if isinstance(expr, cst.Call):
            callee = self._callee(expr)
            if callee in _BOOLEAN_CALLS:
                return self.tracer(expr)
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in _BOOLEAN_METHODS:
                return self.tracer(expr)
            return False
        if isinstance(expr, cst.Name):
            return self.tracer(expr) and self._context.shapes.category(expr) is not None and (
                self._context.shapes.category(expr).name == "BOOL"
            )
        return False

    def array_evidence(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` is surely an array rather than a container of arrays (a tuple's truth is static)."""
        if isinstance(expr, cst.Name):
            if self._context.arrays.is_array(expr):
                return True
            return self._context.dataflow.is_array_like(expr) or self._bound_to_arrays(expr)
        if isinstance(expr, cst.Subscript):
            return self.array_evidence(expr.value)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in ("T", "mT", "real", "imag") and self.array_evidence(expr.value)
        return self.tracer(expr)

    # ---- tracers -------------------------------------------------------------------------------------------

    def _kind(self, expr: cst.BaseExpression) -> Kind:
        try:
            return self._traced.kind(expr)
        except KeyError:
            return Kind.UNKNOWN

    def _callee(self, call: cst.Call) -> str | None:
        return self._names.callee(call) if call in self._context.parents else None

    def _tracer(self, expr: cst.BaseExpression, seen: frozenset) -> bool:
        if not self._traced.in_traced_code(expr) or self._kind(expr) is not Kind.TRACED:
            return False
        tracer = lambda e: self._tracer(e, seen)  # noqa: E731
        if isinstance(expr, cst.Call):
            callee = self._callee(expr)
            if callee is not None:
                if callee == "jax.numpy.where" and len(expr.args) == 3:
                    return True  # the three-argument form selects; the one-argument form returns a tuple
                return (
                    callee.startswith(ARRAY_NAMESPACES)
                    and not callee.startswith(_NOT_ONE_ARRAY_PREFIXES)
                    and callee not in STATIC_CALLS
                    and callee not in _NOT_ONE_ARRAY
                )
            func = expr.func
            if isinstance(func, cst.Attribute):
                receiver = func.value
                if func.attr.value in ("set", "add", "multiply", "divide", "min", "max", "get", "apply"):
                    if isinstance(receiver, cst.Subscript) and isinstance(receiver.value, cst.Attribute):
                        if receiver.value.attr.value == "at":
                            return tracer(receiver.value.value)
                return func.attr.value in ARRAY_METHODS and tracer(receiver)
            return False
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.left, _STRINGS) or isinstance(expr.right, _STRINGS):
                return False
            return tracer(expr.left) or tracer(expr.right)
        if isinstance(expr, cst.UnaryOperation):
            return not isinstance(expr.operator, cst.Not) and tracer(expr.expression)
        if isinstance(expr, cst.Comparison):
            return self._traced_comparison(expr, seen)
        if isinstance(expr, cst.Subscript):
            return tracer(expr.value) and self.array_evidence(expr.value)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in ("T", "mT", "real", "imag") and tracer(expr.value)
        if isinstance(expr, cst.Name):
            return self._name_tracer(expr, seen)
        return False

    def _traced_comparison(self, expr: cst.Comparison, seen: frozenset) -> bool:
        """`a < b` (chained too) where each pair has a tracer operand and no operand is None, a string or a
        container; `==`/`!=` also need an array on one side, or a number on the other."""
        operands = [expr.left, *(c.comparator for c in expr.comparisons)]
        if any(is_none(o) or isinstance(o, _STRINGS + _CONTAINERS) for o in operands):
            return False
        for index, comparison in enumerate(expr.comparisons):
            if not isinstance(comparison.operator, _COMPARISONS):
                return False
            left, right = operands[index], operands[index + 1]
            traced = [side for side in (left, right) if self._tracer(side, seen)]
            if not traced:
                return False
            if isinstance(comparison.operator, (cst.Equal, cst.NotEqual)):
                numbers = any(is_number(side) for side in (left, right))
                if not numbers and not any(self.array_evidence(side) for side in traced):
                    return False
        return True

    def _name_tracer(self, name: cst.Name, seen: frozenset) -> bool:
        if name.value in ("True", "False", "None"):
            return False
        dataflow = self._context.dataflow
        function = dataflow.enclosing_function(name)
        if isinstance(function, cst.Module):
            return False
        key = (function, name.value)
        if key in seen:
            # A cycle (`n = n / 2` in a loop): every binding on it is judged by the others, so assuming a tracer
            # here is the greatest fixed point; a cycle with no binding outside it has UNDEFINED among them.
            return True
        seen = seen | {key}
        if isinstance(function, cst.Lambda):
            params = {p.name.value: p for p in _parameters(function.params)}
            if name.value in params:
                return self._param_tracer(function, params[name.value], seen)
            return self._outer_tracer(name, seen)
        flow = dataflow.flow(function)
        if name.value not in flow.locals:
            return self._outer_tracer(name, seen)
        statement = self._statement(name)
        if statement is None:
            return False
        sources = set(flow.reaching(statement, name.value))
        if isinstance(statement, cst.While) and name.value in activity(statement.body).writes:
            # FunctionFlow records the state on entry at a `while`; its test also sees what the body leaves.
            after = _state_after_body(flow, statement, name.value)
            if after is None:
                return False  # `continue`, or a last statement this analysis cannot follow
            sources |= after
        return bool(sources) and all(self._source_tracer(function, name.value, s, seen) for s in sources)

    def _source_tracer(self, function, name: str, source, seen: frozenset) -> bool:
        if source is UNDEFINED:
            return False
        if isinstance(source, Parameter):
            return self._param_tracer(function, source.param, seen)
        if isinstance(source, cst.AugAssign):
            if self._tracer(source.value, seen):
                return True
            if source in seen:
                # `total += 1` in a loop reaches itself: as for names (_name_tracer), the cycle is judged by
                # the bindings that enter it, and assuming a tracer on it is the greatest fixed point.
                return True
            seen = seen | {source}
            flow = self._context.dataflow.flow(function)
            statement = self._statement(source)
            earlier = flow.reaching(statement, name) if statement is not None else frozenset()
            return bool(earlier) and all(self._source_tracer(function, name, s, seen) for s in earlier)
        if isinstance(source, cst.BaseExpression):
            return self._tracer(source, seen)
        if isinstance(source, cst.Assign):  # `a, b = x[0], x[1]`: the element bound to the name
            value = unpacked(source, name)
            return value is not None and self._tracer(value, seen)
        return False  # `for`, `with`, other unpacking, imports, definitions: not proven

    def _param_tracer(self, function, param: cst.Param, seen: frozenset) -> bool:
        name = param.name.value
        params = function.params
        if param.default is not None or param is params.star_arg or param is params.star_kwarg:
            return False
        if self._traced.param_kind(function, name) is not Kind.TRACED:
            return False
        if self._traced.seeded_kind(function, name) is Kind.TRACED:
            return True
        sites = self._traced.traced_call_sites(function)
        if not sites:
            return False
        for call in sites:
            argument = _bound_argument(function, name, call)
            if argument is None or not self._tracer(argument, seen):
                return False
        return True

    def _outer_tracer(self, name: cst.Name, seen: frozenset) -> bool:
        """A name a nested function reads from an enclosing one: every binding of it there is a tracer."""
        scope = self._context.wrapper.resolve(cst.metadata.ScopeProvider).get(name)
        if scope is None:
            return False
        assignments = list(scope[name.value])
        if not assignments:
            return False
        parents = self._context.parents
        for assignment in assignments:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.Param):
                owner = parents.get(parents.get(node))
                if not isinstance(owner, (cst.FunctionDef, cst.Lambda)) or not self._param_tracer(owner, node, seen):
                    return False
                continue
            holder = parents.get(node) if isinstance(node, cst.Name) else None
            if isinstance(holder, cst.AssignTarget):
                assign = parents.get(holder)
                if len(assign.targets) != 1 or holder.target is not node or not self._tracer(assign.value, seen):
                    return False
                continue
            return False
        return True

    def _bound_to_arrays(self, name: cst.Name) -> bool:
        """Every binding reaching this use is an array expression that is not a bare name (a call, a comparison,
        arithmetic) or a parameter annotated as an array."""
        dataflow = self._context.dataflow
        function = dataflow.enclosing_function(name)
        if not isinstance(function, cst.FunctionDef):
            return False
        flow = dataflow.flow(function)
        statement = self._statement(name)
        if statement is None or name.value not in flow.locals:
            return False
        sources = flow.reaching(statement, name.value)
        if not sources:
            return False
        for source in sources:
            if isinstance(source, Parameter):
                if not _annotated_array(source.param):
                    return False
            elif not (
                isinstance(source, (cst.Call, cst.BinaryOperation, cst.Comparison, cst.UnaryOperation))
                and self.tracer(source)
            ):
                return False
        return True

    def _statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The statement whose reaching definitions hold where `node` is evaluated."""
        parents = self._context.parents
        current = node
        while current is not None:
            if isinstance(current, (cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.BaseCompoundStatement)):
                return current
            current = parents.get(current)
        return None


def _parameters(params: cst.Parameters) -> list[cst.Param]:
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    if isinstance(params.star_arg, cst.Param):
        every.append(params.star_arg)
    if params.star_kwarg is not None:
        every.append(params.star_kwarg)
    return every


def _bound_argument(function, name: str, call: cst.Call) -> cst.BaseExpression | None:
    """The argument `call` binds to parameter `name` (positional by order, or by keyword); None if unclear."""
    params = function.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg.value
            continue
        if index < len(positional) and positional[index] == name:
            return arg.value
        index += 1
    return None


_CONTAINER_ANNOTATIONS = frozenset(
    {"Tuple", "tuple", "List", "list", "Sequence", "MutableSequence", "Dict", "dict", "Mapping", "MutableMapping",
     "Iterable", "Iterator", "Collection", "Set", "set", "FrozenSet", "frozenset", "Deque", "deque", "NamedTuple"}
)


def _last_part(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _annotated_array(param: cst.Param) -> bool:
    """`x: jax.Array`, `x: jnp.ndarray`, `x: Float[Array, "n"]`, ..."""
    annotation = param.annotation.annotation if param.annotation is not None else None
    if annotation is None:
        return False
    if isinstance(annotation, cst.Subscript):
        if _last_part(annotation.value) in _CONTAINER_ANNOTATIONS:
            return False  # `Tuple[jax.Array, jax.Array]`: a container of arrays, whose truth is its length
        annotation = annotation.slice[0].slice.value if isinstance(annotation.slice[0].slice, cst.Index) else None
    while isinstance(annotation, cst.Attribute):
        if annotation.attr.value in ARRAY_ANNOTATION_NAMES:
            return True
        annotation = None
    return isinstance(annotation, cst.Name) and annotation.value in BARE_ARRAY_ANNOTATION_NAMES


def _state_after_body(flow, loop: cst.While, name: str) -> set | None:
    """The bindings of `name` that reach the test of `loop` again after a trip through its body, when the
    body has no `continue` and ends in a plain statement; None otherwise."""
    if any(isinstance(node, cst.Continue) for node in walk(loop.body)):
        return None
    end = body_statements(loop.body)[-1]
    if name not in activity(end).writes:
        return set(flow.reaching(end, name))
    if isinstance(end, cst.SimpleStatementLine) and len(end.body) == 1:
        small = end.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            return {small.value}
        if isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            return {small}
    return None
