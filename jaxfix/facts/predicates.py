"""Whether a value in traced code is surely a JAX tracer, and whether it surely is an array: the fact, on `ast`.

`if x > 0:` fails under `jax.jit` exactly when `x` is a tracer there. `Traced.kind` says TRACED when a value *may*
depend on a traced argument: right for "may this need staging", not enough for a rewrite, which would turn
`if n > 0:` on a Python int computed at trace time into a `lax.cond`. So this module proves tracers from the code:

- a call into `jax.numpy`/`jax.lax`/`jax.nn`/`jax.random`/... that returns one array (not `jnp.shape`, not a
  tuple-returning `jnp.linalg.eigh`), an array method of a tracer (`x.sum()`), arithmetic, comparisons and
  indexing with a tracer operand (a string operand aside: `"%d" % x` is a string);
- a name, when every binding that reaches the use is one (flow-sensitive, `flow.Reaching`: `m = None` then
  `m = jnp.ones(3)` is a tracer after the second binding only);
- a parameter without a default (an omitted default is never traced, `jit` passes it as is), not `*args`
  or `**kwargs`, that a transformation or a lax primitive traces directly (`Traced.seeded_kind`), or that
  every call from traced code binds to a tracer.
Attributes (`state.count`, `self.flag`) are never proven: a pytree field may be static (flax's
`struct.field(pytree_node=False)`, an equinox static field).

A bare name, attribute or subscript needs one more fact before its truth test surely fails, since the truth of a
tuple or a dict is a Python bool: evidence that it holds an array (`array_evidence`: every binding makes an
array, a use only arrays allow, an array annotation). So does `a == b`, which compares tuples and dicts by
structure, unless the other side is a number.

It agreed exactly with the LibCST logic of `analysis.predicates.PredicateAnalysis` it replaced (with
`ArrayAnalysis.is_array` and `Dataflow.is_array_like` beneath it) on every expression read in traced code of
examples/, corpus/, tests/planted and the 10 real trees; that class is now an adapter over this fact for the
branch rules. benchmarks/agreement.py's `array-exact` still compares `is_array` with ArrayAnalysis on every name
read, and `reaching-exact` facts/flow.py's `Reaching` with FunctionFlow's reaching definitions."""

from __future__ import annotations

import ast
import enum
from typing import Callable

from jaxfix.facts.binder import Binder, Scope
from jaxfix.facts.flow import UNDEFINED, Lines, Parameter, Reaching, activity, block_activity
from jaxfix.facts.knowledge.jax import (
    ARRAY_EVIDENCE_ATTRIBUTES, ARRAY_METHODS, ARRAY_NAMESPACES, ARRAY_VIEW_ATTRIBUTES, BOOLEAN_METHODS, BOOLEAN_RESULT,
    NOT_ONE_ARRAY, NOT_ONE_ARRAY_PREFIXES, SEQUENCE_ACCEPTING, STATIC_CALLS,
)
from jaxfix.facts.knowledge.tables import ARRAY_ANNOTATION_NAMES, BARE_ARRAY_ANNOTATION_NAMES
from jaxfix.facts.literals import is_number
from jaxfix.facts.traced import FUNCTIONS, Kind, Traced, call_args
from jaxfix.facts.values import Values, has_default

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_CONTAINERS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)
_DISPLAYS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)  # not a generator
_CONTAINER_ANNOTATIONS = frozenset(
    {"Tuple", "tuple", "List", "list", "Sequence", "MutableSequence", "Dict", "dict", "Mapping", "MutableMapping",
     "Iterable", "Iterator", "Collection", "Set", "set", "FrozenSet", "frozenset", "Deque", "deque", "NamedTuple"}
)
_JNP = "jax.numpy."
_AT_UPDATES = frozenset({"set", "add", "multiply", "divide", "min", "max", "get", "apply"})
_TEXT_BUILTINS = ("str", "repr", "format", "ascii")


def _string(expr: ast.AST) -> bool:
    """A string literal (bytes too) or an f-string: LibCST's SimpleString, ConcatenatedString, FormattedString."""
    kind = type(expr)
    return kind is ast.JoinedStr or (kind is ast.Constant and isinstance(expr.value, (str, bytes)))


def _none(expr: ast.AST) -> bool:
    return type(expr) is ast.Constant and expr.value is None


def _at_base(expr: ast.AST) -> ast.AST | None:
    """`x` in `x.at[idx]`, else None."""
    if type(expr) is ast.Subscript and type(expr.value) is ast.Attribute and expr.value.attr == "at":
        return expr.value.value
    return None


def _starred_parameter(function: ast.AST, arg: ast.arg) -> bool:
    return arg is function.args.vararg or arg is function.args.kwarg


def _parameters(function: ast.AST) -> list[ast.arg]:
    arguments = function.args
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    return every + [a for a in (arguments.vararg, arguments.kwarg) if a is not None]


class Truth(enum.Enum):
    """What Python's truth test of an expression does in traced code (`Predicates.truth`)."""

    TRACED = "traced"  # surely raises TracerBoolConversionError, and every `and`/`or`/`not` part is traced
    MIXED = "mixed"  # surely raises, but an `and`/`or` also has static parts, which Python short-circuits
    OTHER = "other"  # static, unknown, or not proven: stays Python


class Predicates:
    """Tracers and array evidence in one module, each answer memoized where it needs no assumption."""

    def __init__(
        self, binder: Binder, traced: Traced, lines: Lines, values: Values, reaching: Callable[[ast.AST], Reaching],
        shapes: Callable[[], object] | None = None,
    ) -> None:
        """`reaching`: a function's reaching definitions, made once per function (`FileFacts.reaching`); `shapes`:
        the module's `facts.shapes.Shapes`, asked when a name's dtype category is wanted (`boolean`)."""
        self.binder = binder
        self._shapes = shapes
        self.traced = traced
        self.values = values
        self._lines = lines
        self._flow = reaching
        self._tracers: dict[ast.AST, bool] = {}
        self._reads: dict[tuple[Scope, str], list[ast.Name]] | None = None

    # ---- queries ------------------------------------------------------------------------------------------------

    def tracer(self, expr: ast.AST) -> bool:
        """Whether `expr` surely evaluates to a traced JAX array where it stands."""
        found = self._tracers.get(expr)
        if found is None:
            found = self._tracers[expr] = self._tracer(expr, frozenset())
        return found

    def traced_tree(self, expr: ast.AST) -> bool:
        """Whether every leaf of `expr`'s value is surely a tracer where it stands: a tracer, or an item of one
        (`batch["x"]`, `carry[0]`), since a pytree's lists, tuples and dicts hold only leaves and subtrees, which a
        transformation traces alike. An attribute is not (`model.dim`: a pytree class's field may be static), nor
        `str(x)` (a trace-time string)."""
        while type(expr) is ast.Subscript:
            if self.tracer(expr):
                return True
            expr = expr.value
        return self.tracer(expr)

    def static_suspect(self, expr: ast.AST) -> str | None:
        """Why `expr`, a value that depends on a traced one but is not proven a tracer, may well be a Python value
        at trace time, in words a message can show; None where its code suggests nothing of the kind (the result
        of a call on tracers, say). A field of a pytree may be static (`model.dim`, an NNX module's Python int, a
        flax.struct `pytree_node=False` field: the parameter is a tree, its attributes are not all leaves), and a
        string built from a tracer (`str(x)`, an f-string) is text made at trace time."""
        while type(expr) is ast.Subscript or (type(expr) is ast.Attribute and expr.attr in ARRAY_VIEW_ATTRIBUTES):
            expr = expr.value
        if type(expr) is ast.Attribute:
            return (
                "an attribute: a pytree's static fields (an NNX module's Python int, a `pytree_node=False` field) "
                "are Python values at trace time"
            )
        text = _string(expr) or (type(expr) is ast.BinOp and _string(expr.left))  # `"%s" % x`, `"x=" + s`
        if text or (type(expr) is ast.Call and any(self.binder.is_builtin(expr.func, n) for n in _TEXT_BUILTINS)):
            return "a string made at trace time, which shows a tracer"
        return None

    def truth(self, expr: ast.AST) -> Truth:
        """What `if expr:` (or `while`, `not`, `and`/`or`) does under tracing (`Truth`): a tracer's test fails, a
        bare name, attribute or subscript's only with evidence of an array, a comparison's where it is traced
        (`traced_comparison`); `and`/`or` fails surely where its first operand's test does, which Python asks
        first."""
        kind = type(expr)
        if kind is ast.BoolOp:
            parts = [self.truth(value) for value in expr.values]
            if all(part is Truth.TRACED for part in parts):
                return Truth.TRACED
            return Truth.MIXED if parts[0] is not Truth.OTHER else Truth.OTHER
        if kind is ast.UnaryOp and type(expr.op) is ast.Not:
            return self.truth(expr.operand)
        if kind is ast.Compare:
            return Truth.TRACED if self.traced_comparison(expr) else Truth.OTHER
        if kind in (ast.Name, ast.Attribute, ast.Subscript):
            return Truth.TRACED if self.tracer(expr) and self.array_evidence(expr) else Truth.OTHER
        return Truth.TRACED if self.tracer(expr) else Truth.OTHER

    def boolean(self, expr: ast.AST) -> bool:
        """Whether `expr` surely is a traced boolean array, so that `and`/`or`/`not` on it mean `jnp.logical_and`/
        `logical_or`/`logical_not` in any context, not only in a truth test: a traced comparison, a boolean
        jax.numpy function's or `.all()`/`.any()`'s tracer, a tracer name of dtype category bool, and their
        `and`/`or`/`not`."""
        kind = type(expr)
        if kind is ast.BoolOp:
            return all(self.boolean(value) for value in expr.values)
        if kind is ast.UnaryOp:
            return type(expr.op) is ast.Not and self.boolean(expr.operand)
        if kind is ast.Compare:
            return self.traced_comparison(expr)
        if kind is ast.Call:
            func = expr.func
            if self.binder.callee(expr) in BOOLEAN_RESULT or (type(func) is ast.Attribute and func.attr in BOOLEAN_METHODS):
                return self.tracer(expr)
            return False
        if kind is ast.Name:
            if not self.tracer(expr) or self._shapes is None:
                return False
            category = self._shapes().category(expr)
            return category is not None and category.name == "BOOL"
        return False

    def array_evidence(self, expr: ast.AST) -> bool:
        """Whether `expr` is surely an array rather than a container of arrays (a tuple's truth is static)."""
        kind = type(expr)
        if kind is ast.Name:
            return self.is_array(expr) or self.name_is_array_like(expr) or self._bound_to_arrays(expr)
        if kind is ast.Subscript:
            return self.array_evidence(expr.value)
        if kind is ast.Attribute:
            return expr.attr in ARRAY_VIEW_ATTRIBUTES and self.array_evidence(expr.value)
        return self.tracer(expr)

    def is_array(self, name: ast.Name) -> bool:
        """Whether `name`, where it stands, is known to hold a JAX array (`facts.values`)."""
        return self.values.is_array(name)

    # ---- tracers ------------------------------------------------------------------------------------------------

    def _tracer(self, expr: ast.AST, seen: frozenset) -> bool:
        traced = self.traced
        if not traced.in_traced_code(expr) or traced.kind(expr) is not Kind.TRACED:
            return False
        tracer = lambda e: self._tracer(e, seen)  # noqa: E731
        kind = type(expr)
        if kind is ast.Call:
            callee = self.binder.callee(expr)
            if callee is not None:
                if callee == _JNP + "where" and len(expr.args) + len(expr.keywords) == 3:
                    return True  # the three-argument form selects; the one-argument form returns a tuple
                return (
                    callee.startswith(ARRAY_NAMESPACES)
                    and not callee.startswith(NOT_ONE_ARRAY_PREFIXES)
                    and callee not in STATIC_CALLS
                    and callee not in NOT_ONE_ARRAY
                )
            func = expr.func
            if type(func) is ast.Attribute:
                if func.attr in _AT_UPDATES:
                    base = _at_base(func.value)
                    if base is not None:
                        return tracer(base)
                return func.attr in ARRAY_METHODS and tracer(func.value)
            return False
        if kind is ast.BinOp:
            if _string(expr.left) or _string(expr.right):
                return False
            return tracer(expr.left) or tracer(expr.right)
        if kind is ast.UnaryOp:
            return not isinstance(expr.op, ast.Not) and tracer(expr.operand)
        if kind is ast.Compare:
            return self._traced_comparison(expr, seen)
        if kind is ast.Subscript:
            return tracer(expr.value) and self.array_evidence(expr.value)
        if kind is ast.Attribute:
            return expr.attr in ARRAY_VIEW_ATTRIBUTES and tracer(expr.value)
        if kind is ast.Name:
            return self._name_tracer(expr, seen)
        return False

    def traced_comparison(self, expr: ast.Compare) -> bool:
        return self._traced_comparison(expr, frozenset())

    def _traced_comparison(self, expr: ast.Compare, seen: frozenset) -> bool:
        """`a < b` (chained too) where each pair has a tracer operand and no operand is None, a string or a
        container; `==`/`!=` also need an array on one side, or a number on the other."""
        operands = [expr.left, *expr.comparators]
        if any(_none(o) or _string(o) or isinstance(o, _CONTAINERS) for o in operands):
            return False
        for index, operator in enumerate(expr.ops):
            if not isinstance(operator, _COMPARISONS):
                return False
            left, right = operands[index], operands[index + 1]
            traced = [side for side in (left, right) if self._tracer(side, seen)]
            if not traced:
                return False
            if isinstance(operator, (ast.Eq, ast.NotEq)):
                numbers = is_number(left) or is_number(right)
                if not numbers and not any(self.array_evidence(side) for side in traced):
                    return False
        return True

    def _flow_owner(self, node: ast.AST) -> ast.AST:
        """The innermost def or lambda holding `node` (its signature included), or the module."""
        found = self.traced.enclosing_function(node)
        return found if found is not None else self.binder.tree

    def _statement(self, node: ast.AST) -> ast.stmt | None:
        parents = self.binder.parents
        current = node
        while current is not None and not isinstance(current, ast.stmt):
            current = parents.get(current)
        return current

    def _name_tracer(self, name: ast.Name, seen: frozenset) -> bool:
        function = self._flow_owner(name)
        if type(function) is ast.Module:
            return False
        key = (function, name.id)
        if key in seen:
            # A cycle (`n = n / 2` in a loop): every binding on it is judged by the others, so assuming a tracer
            # here is the greatest fixed point; a cycle with no binding outside it has UNDEFINED among them.
            return True
        seen = seen | {key}
        if type(function) is ast.Lambda:
            params = {a.arg: a for a in _parameters(function)}
            if name.id in params:
                return self._param_tracer(function, params[name.id], seen)
            return self._outer_tracer(name, seen)
        flow = self._flow(function)
        if name.id not in flow.locals:
            return self._outer_tracer(name, seen)
        statement = self._statement(name)
        if statement is None:
            return False
        sources = set(flow.reaching(statement, name.id))
        if type(statement) is ast.While and name.id in block_activity(statement.body).writes:
            # The reaching state at a `while` is the one on entry; its test also sees what the body leaves.
            after = self._state_after_body(flow, statement, name.id)
            if after is None:
                return False  # `continue`, or a last statement this analysis cannot follow
            sources |= after
        return bool(sources) and all(self._source_tracer(function, name.id, s, seen) for s in sources)

    def _state_after_body(self, flow: Reaching, loop: ast.While, name: str) -> set | None:
        """The bindings of `name` that reach the test of `loop` again after a trip through its body, when the
        body has no `continue` and ends in a plain statement; None otherwise."""
        if any(type(node) is ast.Continue for statement in loop.body for node in ast.walk(statement)):
            return None
        kind, end = self._lines.group(loop.body)[-1]
        writes = {w for statement in end for w in activity(statement).writes}
        if name not in writes:
            return set(flow.reaching(end[0], name))
        if kind == "line" and len(end) == 1:
            small = end[0]
            if type(small) is ast.Assign and len(small.targets) == 1 and type(small.targets[0]) is ast.Name:
                return {small.value}
            if type(small) is ast.AugAssign and type(small.target) is ast.Name:
                return {small}
        return None

    def _source_tracer(self, function: ast.AST, name: str, source, seen: frozenset) -> bool:
        if source is UNDEFINED:
            return False
        if isinstance(source, Parameter):
            return self._param_tracer(function, source.node, seen)
        if type(source) is ast.AugAssign:
            if self._tracer(source.value, seen):
                return True
            if source in seen:
                # `total += 1` in a loop reaches itself: as for names, the cycle is judged by the bindings that
                # enter it, and assuming a tracer on it is the greatest fixed point.
                return True
            seen = seen | {source}
            earlier = self._flow(function).reaching(source, name)
            return bool(earlier) and all(self._source_tracer(function, name, s, seen) for s in earlier)
        if isinstance(source, ast.expr):
            return self._tracer(source, seen)
        if type(source) is ast.Assign:  # `a, b = x[0], x[1]`: the element bound to the name
            value = _unpacked(source, name)
            return value is not None and self._tracer(value, seen)
        return False  # `for`, `with`, other unpacking, imports, definitions: not proven

    def _param_tracer(self, function: ast.AST, arg: ast.arg, seen: frozenset) -> bool:
        if has_default(function.args, arg) or _starred_parameter(function, arg):
            return False
        traced = self.traced
        if traced.param_kind(function, arg.arg) is not Kind.TRACED:
            return False
        if traced.seeded_kind(function, arg.arg) is Kind.TRACED:
            return True
        sites = traced.traced_call_sites(function)
        if not sites:
            return False
        for call in sites:
            argument = _bound_argument(function, arg.arg, call)
            if argument is None or not self._tracer(argument, seen):
                return False
        return True

    def _outer_tracer(self, name: ast.Name, seen: frozenset) -> bool:
        """A name a nested function reads from an enclosing one: every binding of it there is a tracer."""
        bindings = self._bindings(name)
        if not bindings:
            return False
        parents = self.binder.parents
        for binding in bindings:
            node = binding.node
            if type(node) is ast.arg:
                owner = parents.get(parents.get(node))
                if type(owner) not in FUNCTIONS or not self._param_tracer(owner, node, seen):
                    return False
                continue
            holder = parents.get(node) if type(node) is ast.Name else None
            if type(holder) is ast.Assign and any(t is node for t in holder.targets):
                if len(holder.targets) != 1 or not self._tracer(holder.value, seen):
                    return False
                continue
            return False
        return True

    def _bound_to_arrays(self, name: ast.Name) -> bool:
        """Every binding reaching this use is an array expression that is not a bare name (a call, a comparison,
        arithmetic) or a parameter annotated as an array."""
        function = self._flow_owner(name)
        if type(function) not in _DEFS:
            return False
        flow = self._flow(function)
        statement = self._statement(name)
        if statement is None or name.id not in flow.locals:
            return False
        sources = flow.reaching(statement, name.id)
        if not sources:
            return False
        for source in sources:
            if isinstance(source, Parameter):
                if not _annotated_array(source.node):
                    return False
            elif not (type(source) in (ast.Call, ast.BinOp, ast.Compare, ast.UnaryOp) and self.tracer(source)):
                return False
        return True

    # ---- names ---------------------------------------------------------------------------------------------------

    def _bindings(self, name: ast.Name) -> list:
        """Every binding of the scope that answers `name` where it is read (LibCST's `scope[name]`)."""
        read = self.binder.reads.get(name)
        return read.scope.resolve(name.id) if read is not None else []

    def _owner(self, name: ast.Name) -> Scope | None:
        bindings = self._bindings(name)
        return bindings[0].scope if bindings else None

    def _reads_in(self, scope: Scope, name: str) -> list[ast.Name]:
        """The names read in `scope` itself (not in a scope inside it) spelled `name`."""
        if self._reads is None:
            self._reads = {}
            for read in self.binder.reads.values():
                self._reads.setdefault((read.scope, read.node.id), []).append(read.node)
        return self._reads.get((scope, name), [])

    def name_is_array_like(self, name: ast.Name) -> bool:
        """`Dataflow.is_array_like` of a name: proven an array, or traced, bound only by parameters, augmented
        assignments and assignments of values other than container displays, and used the way only arrays are
        (an array attribute, or a positional argument of a jax.numpy function that rejects lists)."""
        if self.is_array(name):
            return True
        if self.traced.kind(name) is not Kind.TRACED:
            return False
        bindings = self._bindings(name)
        if not bindings or not all(self._not_a_container(binding.node) for binding in bindings):
            return False
        parents = self.binder.parents
        for node in self._reads_in(self.binder.reads[name].scope, name.id):
            parent = parents.get(node)
            if type(parent) is ast.Attribute and parent.value is node:
                if parent.attr in ARRAY_EVIDENCE_ATTRIBUTES:
                    return True
            argument = parent if type(parent) is ast.Starred else node
            call = parents.get(argument)
            if type(call) is ast.Call and any(a is argument for a in call.args):
                callee = self.binder.callee(call)
                if callee is not None and callee.startswith(_JNP) and callee not in SEQUENCE_ACCEPTING:
                    return True
        return False

    def _not_a_container(self, node: ast.AST) -> bool:
        """A parameter, an augmented assignment's target, or a name assigned something other than a display."""
        if type(node) is ast.arg:
            return True
        holder = self.binder.parents.get(node) if type(node) is ast.Name else None
        if type(holder) is ast.Assign and any(t is node for t in holder.targets):
            return not isinstance(holder.value, _DISPLAYS)  # a container, not an array
        return type(holder) is ast.AugAssign and holder.target is node


def _bound_argument(function: ast.AST, name: str, call: ast.Call) -> ast.AST | None:
    """The argument `call` binds to parameter `name` (positional by order, or by keyword); None if unclear."""
    arguments = function.args
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    index = 0
    for arg in call_args(call):
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword == name:
                return arg.value
            continue
        if index < len(positional) and positional[index] == name:
            return arg.value
        index += 1
    return None


def _unpacked(assign: ast.Assign, name: str) -> ast.AST | None:
    """The element of `a, b = x, y` bound to `name`, when the value is a display of the same length."""
    if len(assign.targets) != 1:
        return None
    target, value = assign.targets[0], assign.value
    if type(target) not in (ast.Tuple, ast.List) or type(value) not in (ast.Tuple, ast.List):
        return None
    if len(target.elts) != len(value.elts):
        return None
    for t, v in zip(target.elts, value.elts):
        if type(t) is ast.Starred:
            t = t.value
        if type(t) is ast.Name and t.id == name and type(v) is not ast.Starred:
            return v
    return None


def _last_part(expr: ast.AST) -> str | None:
    if type(expr) is ast.Attribute:
        return expr.attr
    return expr.id if type(expr) is ast.Name else None


def _annotated_array(arg: ast.arg) -> bool:
    """`x: jax.Array`, `x: jnp.ndarray`, `x: Float[Array, "n"]`, ..."""
    annotation = arg.annotation
    if annotation is None:
        return False
    if type(annotation) is ast.Subscript:
        if _last_part(annotation.value) in _CONTAINER_ANNOTATIONS:
            return False  # `Tuple[jax.Array, jax.Array]`: a container of arrays, whose truth is its length
        index = annotation.slice
        annotation = index.elts[0] if type(index) is ast.Tuple and index.elts else index
        if type(annotation) is ast.Slice:
            annotation = None
    if type(annotation) is ast.Attribute:
        return annotation.attr in ARRAY_ANNOTATION_NAMES
    return type(annotation) is ast.Name and annotation.id in BARE_ARRAY_ANNOTATION_NAMES
