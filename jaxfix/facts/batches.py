"""Which comprehension, `list(map(...))` or `for` loop walks the rows of arrays with independent steps (JF301),
on `ast`: what each variable walks, which arguments are batched, whether each step may be mapped by jax.vmap,
whether a buffer is fresh and written once per row; and JF301's decision on each candidate (a finding with its
message and plan, a report without a fix, a decline, or nothing) (`FileFacts.batches`).

The statements of a body are held as LibCST holds them: each one a list of `ast` statements (`flow.Lines`: the
simple statements of one line joined by `;`, or one compound statement)."""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Sequence

from jaxfix.diagnostics import spelled_with_import
from jaxfix.facts.arrays import ARRAY_VALUE, CalledArray, RecordedArray
from jaxfix.facts.flow import block_activity, block_of, children, target_names, walk
from jaxfix.facts.knowledge.jax import (
    LOUD_FUNCTIONS, NUMERIC_NAMESPACES, POSITIONAL_SAMPLERS, RANDOM_SHAPE_POSITION, SHAPE_ARGUMENTS, STACKING,
    VALUE_SHAPED, WHOLE_REDUCTIONS,
)
from jaxfix.facts.literals import is_number
from jaxfix.facts.purity import returns_one_array
from jaxfix.facts.row_writes import _own_names, row_write
from jaxfix.facts.shapes import REDUCTION_METHODS
from jaxfix.facts.symbolic import FreshBuffer, SymbolicShapes, same_shape, snippet

_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})
_SHAPE_METHODS = frozenset({"reshape", "repeat", "broadcast_to"})
_CONCRETE_BUILTINS = frozenset({"int", "float", "bool", "complex", "len", "range", "list", "tuple", "str", "repr",
                                "print", "iter", "next", "sorted", "set", "dict", "enumerate", "zip", "map",
                                "filter", "round", "divmod", "hash", "format", "min", "max", "sum", "any", "all"})  # fmt: skip
_CONCRETE_METHODS = frozenset({"item", "tolist", "__index__", "__bool__", "__int__", "__float__"})
_MAX_DEPTH = 4  # how deep same-module calls are followed
_SHORT = 10  # `range(k)` with a literal k under this stays a Python loop (as JF101 and JF102 leave it)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
# A use of a name that raises on a tuple, list or dict (jaxfix.facts.arrays' loud uses).
_LOUD_OPERATORS = (ast.Sub, ast.Div, ast.FloorDiv, ast.Pow, ast.MatMult)
_LOUD_WITH_ARRAYS = (ast.Add, ast.Mult)  # `x * 2` repeats a tuple, `x + x` concatenates: only with an array or float
LOUD_ATTRIBUTES = frozenset("shape ndim T dtype size astype reshape sum mean max min ravel flatten transpose squeeze at".split())

RANDOM_NOTE = (
    "; the body draws random numbers: jax.vmap draws the loop's numbers with JAX's default threefry PRNG, not "
    "with the rbg implementations; check the stream if you rely on it"
)
# The Fix safety section's "may compute different numbers", in the message of every fix.
ROUNDING_NOTE = "; unsafe: batched products and reductions may round differently in the last bits"
INDEX_NOTE = (
    "; unsafe: the index is mapped as an int32 array (the loop's was a Python int), and batched products and "
    "reductions may round differently in the last bits"
)


class Refused(Exception):
    """What stops the rewrite, in words for the diagnostic."""


class _NotThis(Exception):
    """Not this rule's pattern after all: no finding."""


@dataclass(frozen=True)
class Count:
    """`jnp.arange(count)`: what an index variable used as a number is mapped over (`count` is code)."""

    count: str


@dataclass
class Batch:
    """A comprehension (or `map`) over the rows of arrays: the per-element expression and what it iterates."""

    element: ast.expr | None  # None for `map(fn, ...)`
    variables: list[str]  # the comprehension's variables (for an index loop: the index)
    arrays: list  # what each variable walks (an index loop: the indexed array); a Count for a number
    index: str | None = None  # `for i in range(len(xs))`: the index, used only as `xs[i]`
    count: ast.expr | None = None  # an index loop's `range(count)` argument
    numbered: bool = False  # an index loop whose index is also used as a number: mapped over jnp.arange too
    mapped: ast.expr | None = None  # the function given to `map`
    statements: list = field(default_factory=list)  # a `for` loop's statements before the `.append(element)`
    append: list | None = None  # the line storing the element (`ys.append(element)`, a row write)


@dataclass
class Function:
    """The local function a fix defines for an element that is not a single call: its name and parameters, the
    statements it keeps and the expression it returns (the loop's, where `rows` is None; else each `array[index]`
    read as the parameter `row`), and the line storing the element whose comments the `return` keeps."""

    name: str
    params: list[str]
    statements: list  # units (lists of ast statements)
    element: ast.expr
    rows: tuple | None  # (index, array name, row name): `array[index]` becomes `row`
    append: list | None


@dataclass
class Spec:
    """What jax.vmap maps: `func` (code) over `arguments` (code) with `axes`; `function`: the local function to
    define first, when the element is not a single call."""

    func: str
    axes: list
    arguments: list[str]
    random: bool
    function: Function | None = None


@dataclass
class Plan:
    """JF301's fix of one finding. `form`: "replace" (the stacking call becomes `vmap_call`), "define" (a local
    function before the statement `statement`, whose stacking call `node` becomes `vmap_call`), "append" (the
    `creation` line removed, the loop replaced by the function and `collector = vmap_call`, the stacking call
    `stack_call` by the collector) or "rows" (the `creation` line removed, the loop by the function and
    `collector = vmap_call.astype(cast)`)."""

    form: str
    node: ast.AST  # the stacking call, or the loop
    vmap_call: str
    spec: Spec
    imports: list
    statement: list | None = None  # "define": the unit holding the call
    creation: ast.stmt | None = None
    stack_call: ast.Call | None = None
    collector: str | None = None
    cast: str | None = None


@dataclass
class Outcome:
    """JF301 on one candidate: a finding (`message`, with a fix where `plan`), or a decline (`declined`)."""

    node: ast.AST
    message: str | None = None
    plan: Plan | None = None
    declined: str | None = None


# ---- LibCST's view of names and arguments ----------------------------------------------------------------------


def _names(node: ast.AST):
    """The spellings of every `Name` LibCST holds in `node` (an attribute's, a keyword's too)."""
    for found in ast.walk(node):
        for _, spelled in _own_names(found):
            yield spelled


def mentions(node, names: set[str]) -> bool:
    if isinstance(node, list):
        return any(mentions(s, names) for s in node)
    return any(spelled in names for spelled in _names(node))


def _count_names(parts, name: str) -> int:
    return sum(1 for part in parts for s in (part if isinstance(part, list) else [part]) for spelled in _names(s) if spelled == name)


def _walk_part(part):
    """`syntax.walk` of a LibCST statement (a unit: its simple statements last first) or expression."""
    if isinstance(part, list):
        for statement in reversed(part):
            yield from walk(statement)
    else:
        yield from walk(part)


def _walk_parts(parts):
    for part in parts:
        yield from _walk_part(part)


def _arguments(call: ast.Call) -> list[tuple[str | None, ast.expr, str]]:
    """A call's arguments as LibCST lists them, in source order: (keyword or None, value, star)."""
    found = []
    for arg in call.args:
        if type(arg) is ast.Starred:
            found.append((None, arg.value, "*", arg))
        else:
            found.append((None, arg, "", arg))
    for keyword in call.keywords:
        found.append((keyword.arg, keyword.value, "" if keyword.arg is not None else "**", keyword))
    if call.keywords and call.args and hasattr(call.args[0], "lineno"):
        found.sort(key=lambda a: (getattr(a[3], "lineno", 0), getattr(a[3], "col_offset", 0)))
    return [a[:3] for a in found]


def _int_literal(node: ast.AST) -> int | None:
    return node.value if type(node) is ast.Constant and type(node.value) is int else None


def _batched(node: ast.AST, tainted: set[str]) -> bool:
    """Whether `node` reads a batched name otherwise than through a static attribute (`x.shape`, `x.ndim`)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is ast.Attribute and current.attr in _STATIC_ATTRIBUTES:
            continue
        if any(spelled in tainted for _, spelled in _own_names(current)):
            return True
        stack.extend(ast.iter_child_nodes(current))
    return False


def batched_names(statements, tainted: set[str]) -> set[str]:
    """`tainted` and the names assigned from values computed from them (flow-insensitively): batched too."""
    tainted = set(tainted)
    for _ in range(10):
        grown = False
        for node in _walk_parts(statements):
            kind = type(node)
            if kind in (ast.Assign, ast.AugAssign, ast.AnnAssign) and node.value is not None:
                if _batched(node.value, tainted):
                    targets = node.targets if kind is ast.Assign else [node.target]
                    for target in targets:
                        new = set(target_names(target)) - tainted
                        if new:
                            tainted |= new
                            grown = True
        if not grown:
            break
    return tainted


def _has_comparison(node: ast.AST) -> bool:
    return any(type(n) is ast.Compare for n in ast.walk(node))


def _walk_own(statements):
    """Every node under `statements`, not entering nested functions, lambdas and classes (whose returns are theirs)."""
    stack = list(statements)
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (*_FUNCTIONS, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(current))


def _subscript_parts(node: ast.Subscript) -> list[ast.AST]:
    return list(node.slice.elts) if type(node.slice) is ast.Tuple else [node.slice]


def stack_axis(call: ast.Call, callee: str) -> int | None:
    """The stacking axis of `jnp.stack(ys, axis=k)` (0 without one, and for `jnp.array(ys)`); None when the
    call has other arguments (`dtype=`, a positional or computed axis), which this rule leaves alone."""
    axis = 0
    for keyword, value, _ in _arguments(call)[1:]:
        if callee != "jax.numpy.stack" or keyword != "axis":
            return None
        negative = type(value) is ast.UnaryOp and type(value.op) is ast.USub
        literal = _int_literal(value.operand if negative else value)
        if literal is None:
            return None
        axis = -literal if negative else literal
    return axis


def index_only(batch) -> bool:
    """A batch that walks a count and no array's rows (`[f(i) for i in range(n)]`): worth a rewrite where the
    index can be traced, but where it cannot (Python branches or list indexing on it) it is host-side
    arithmetic, not a batch, and is left alone without a report."""
    return all(isinstance(array, Count) for array in batch.arrays)


def _loud_parent(node, parent, facts) -> ast.AST | None:
    kind = type(parent)
    if kind is ast.Attribute and parent.value is node and parent.attr in LOUD_ATTRIBUTES:
        return parent
    if kind is ast.UnaryOp and type(parent.op) is ast.USub:
        return parent
    if kind is ast.BinOp:
        if isinstance(parent.op, _LOUD_OPERATORS):
            return parent
        other = parent.right if parent.left is node else parent.left
        if isinstance(parent.op, _LOUD_WITH_ARRAYS) and (
            (type(other) is ast.Constant and type(other.value) is float)
            or (other is not node and facts.purity.is_array_like(other))
        ):
            return parent
    if kind is ast.Call and any(a is node for a in parent.args) and facts.binder.callee(parent) in LOUD_FUNCTIONS:
        return parent
    return None


def _evaluated(expr: ast.AST):
    """The nodes of `expr` that run every time it does."""
    yield expr
    kind = type(expr)
    if kind in _SCOPES:
        return
    if kind is ast.IfExp:
        yield from _evaluated(expr.test)
        return
    if kind is ast.BoolOp:
        yield from _evaluated(expr.values[0])
        return
    for child in children(expr):
        yield from _evaluated(child)


# ---- the facts ----------------------------------------------------------------------------------------------


class BatchFacts:
    """JF301's facts and decisions in one file (`FileFacts.batches`), asked by node."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self.binder = facts.binder
        self.purity = facts.purity
        self.symbolic = SymbolicShapes(facts)

    def code(self, node: ast.AST) -> str:
        return self.purity.code(node)

    # ---- the decisions, in the order of the source -----------------------------------------------------------

    def outcomes(self) -> list[Outcome]:
        """JF301 on every candidate of the module (stacking calls and `for` loops), in LibCST's visiting order."""
        found = getattr(self, "_outcomes", None)
        if found is None:
            candidates = [*self.binder.nodes_of(ast.For), *self.binder.nodes_of(ast.Call)]
            candidates.sort(key=lambda n: (n.lineno, n.col_offset, -n.end_lineno, -n.end_col_offset, type(n) is ast.Call))
            found = []
            for node in candidates:
                outcome = _Decision(self).stack_call(node) if type(node) is ast.Call else _Decision(self).loop(node)
                if outcome is not None:
                    found.append(outcome)
            self._outcomes = found
        return found

    # ---- what a batch walks --------------------------------------------------------------------------------

    def builtin(self, func: ast.AST, name: str) -> bool:
        return type(func) is ast.Name and func.id == name and self.binder.is_builtin(func, name)

    def batch(self, value: ast.AST) -> Batch | None:
        """The comprehension or `list(map(...))` passed to the stacking call, when it has a shape we handle."""
        if type(value) is ast.Call and self.builtin(value.func, "list") and len(_arguments(value)) == 1:
            inner = _arguments(value)[0][1]
            if not (type(inner) is ast.Call and self.builtin(inner.func, "map")) or len(_arguments(inner)) < 2:
                return None
            arguments = _arguments(inner)
            if any(k is not None or s for k, _, s in arguments):
                return None
            return Batch(None, [], [v for _, v, _ in arguments[1:]], mapped=arguments[0][1])
        if type(value) is not ast.ListComp:
            return None
        if len(value.generators) != 1:
            return None
        comp = value.generators[0]
        if comp.ifs or comp.is_async:
            return None
        return self.iteration(comp.target, comp.iter, value.elt)

    def iteration(self, target, iterable, element, statements=()) -> Batch | None:
        """What a `for` clause walks: the rows of arrays (`x in xs`, `zip`), an index (`range(len(xs))` read as
        `xs[i]`), a number (`range(n)`), or both (`enumerate(xs)`)."""
        statements = list(statements)
        if type(target) is ast.Name:
            index_array = self.index_range(iterable)
            if index_array is not None:
                return Batch(element, [target.id], [index_array], index=target.id, statements=statements,
                             count=iterable.args[0])  # fmt: skip
            count = self.range_count(iterable)
            if count is not None:
                if self.indexes_containers(target.id, [*statements, element]):
                    return None  # gathering items of Python lists (`results[i][k]`): host-side plumbing, no batch
                return Batch(element, [target.id], [Count(self.code(count))], statements=statements)
            return Batch(element, [target.id], [iterable], statements=statements)
        if type(target) not in (ast.Tuple, ast.List) or type(iterable) is not ast.Call:
            return None
        elements = target.elts
        if not all(type(e) is ast.Name for e in elements):
            return None
        args = _arguments(iterable)
        if any(k is not None or s for k, _, s in args):
            return None
        if self.builtin(iterable.func, "zip") and len(args) == len(elements):
            return Batch(element, [e.id for e in elements], [v for _, v, _ in args], statements=statements)
        if self.builtin(iterable.func, "enumerate") and len(args) == 1 and len(elements) == 2:
            array = args[0][1]
            if type(array) is not ast.Name:
                return None
            return Batch(element, [e.id for e in elements], [Count(f"len({array.id})"), array], statements=statements)
        return None

    def index_range(self, iterable: ast.AST) -> ast.expr | None:
        """`xs` of `range(len(xs))` or `range(xs.shape[0])`."""
        if not (type(iterable) is ast.Call and self.builtin(iterable.func, "range") and len(_arguments(iterable)) == 1):
            return None
        keyword, value, star = _arguments(iterable)[0]
        if keyword is not None or star:
            return None
        if type(value) is ast.Call and self.builtin(value.func, "len") and len(_arguments(value)) == 1:
            inner = _arguments(value)[0][1]
            return inner if type(inner) is ast.Name else None
        if (
            type(value) is ast.Subscript
            and type(value.value) is ast.Attribute
            and value.value.attr == "shape"
            and type(value.value.value) is ast.Name
            and _int_literal(value.slice) == 0
        ):
            return value.value.value
        return None

    def range_count(self, iterable) -> ast.expr | None:
        """`n` of `range(n)` (one argument), unless a literal under 10: a short loop stays a loop (as JF101)."""
        if not (type(iterable) is ast.Call and self.builtin(iterable.func, "range") and len(_arguments(iterable)) == 1):
            return None
        keyword, value, star = _arguments(iterable)[0]
        if keyword is not None or star:
            return None
        literal = _int_literal(value)
        if literal is not None and literal < _SHORT:
            return None
        return value

    @staticmethod
    def is_row(node: ast.AST, index: str, array) -> bool:
        return (
            type(node) is ast.Subscript
            and type(node.value) is ast.Name
            and type(array) is ast.Name
            and node.value.id == array.id
            and type(node.slice) is ast.Name
            and node.slice.id == index
        )

    @staticmethod
    def row_subscript(node: ast.AST, index: str) -> bool:
        return (
            type(node) is ast.Subscript and type(node.value) is ast.Name and type(node.slice) is ast.Name
            and node.slice.id == index
        )  # fmt: skip

    def indexes_other(self, index: str, parts, array) -> bool:
        """Whether the index subscripts anything else than `array[index]`."""
        return any(
            type(node) is ast.Subscript and mentions(node.slice, {index}) and not self.is_row(node, index, array)
            for node in _walk_parts(parts)
        )

    def indexes_containers(self, index: str, parts) -> bool:
        """Whether the index subscripts a name not proven to hold a JAX array (a list, a dict, a tuple)."""
        for node in _walk_parts(parts):
            if type(node) is ast.Subscript and type(node.value) is ast.Name and mentions(node.slice, {index}):
                if not self.is_array(node.value):
                    return True
        return False

    # ---- arrays --------------------------------------------------------------------------------------------

    def is_array(self, expr) -> bool:
        """Whether `expr` surely holds one JAX array: the dataflow's evidence, or a name bound once, to a JAX
        function's result (`keys = jax.random.split(key, n)`)."""
        if self.purity.is_array_like(expr):
            return True
        if type(expr) is not ast.Name:
            return False
        scope = self.binder.scope_of.get(expr)
        bindings = scope.resolve(expr.id) if scope is not None else []
        if len(bindings) != 1:
            return False
        node = bindings[0].node
        assign = self.binder.parents.get(node) if type(node) is ast.Name else None
        return (
            type(assign) is ast.Assign and len(assign.targets) == 1 and assign.targets[0] is node
            and self.purity.is_array_like(assign.value)
        )  # fmt: skip

    def assumed_rows(self, batch: Batch):
        """(name, why, use) when the one array a comprehension walks is not proven to be an array but is a
        non-static argument of a traced function or a library call's output that is one array by convention (a
        Flax module's `apply`), and the element uses the variable in a way that raises on a tuple, list or dict;
        ("", None, None) when every array is proven; else what a recorded run or the project's calls saw; None
        when none of these."""
        if all(isinstance(array, Count) or self.is_array(array) for array in batch.arrays):
            return ("", None, None)
        if batch.element is None or batch.index is not None or batch.statements or len(batch.arrays) != 1:
            return None
        (array,), (variable,) = batch.arrays, batch.variables
        arrays = self.facts.arrays
        function = arrays.traced_argument(array)
        output = arrays.library_output(array) if function is None else None
        use = self.loud_use(variable, batch.element) if function is not None or output is not None else None
        if use is None:
            return arrays.argument_evidence(array)
        if function is not None:
            return (array.id, f"a non-static argument of `{function}`, which JAX traces", use)
        return (array.id, f"the output of `{output}`, one array by the library's convention", use)

    def loud_use(self, name: str, expr: ast.AST) -> ast.AST | None:
        """A use of `name` in `expr`, evaluated whenever `expr` is, that raises if `name` holds a tuple, list or
        dict instead of one array; None if there is none."""
        parents = self.binder.parents
        for node in _evaluated(expr):
            if type(node) is ast.Name and node.id == name:
                found = _loud_parent(node, parents.get(node), self.facts)
                if found is not None:
                    return found
        return None

    def element_is_array(self, expr: ast.AST, rows: set[str]) -> bool:
        """Whether the element surely is one JAX array (not a tuple, which jnp.stack and jax.vmap treat
        differently): facts.arrays.value_kinds, where `rows` hold arrays and a same-module function returning
        one counts."""
        at = self.symbolic.statement(expr) or expr
        return self.facts.arrays.value_kinds(expr, at, frozenset(rows), calls=self.returns_array) == {ARRAY_VALUE}

    def returns_array(self, value: ast.AST) -> bool:
        if self.purity.is_array_like(value):
            return True
        if type(value) is ast.Call:  # a same-module function returning an array
            definition = self.purity.local_function(value.func) if type(value.func) is ast.Name else None
            if isinstance(definition, _FUNCTIONS):
                returns = [n.value for n in _walk_own(definition.body) if type(n) is ast.Return]
                return bool(returns) and all(r is not None and self.purity.is_array_like(r) for r in returns)
        return False

    # ---- the body of a function, a lambda ------------------------------------------------------------------

    def units(self, statements: Sequence[ast.stmt]) -> list[tuple[str, list[ast.stmt]]]:
        return self.facts.lines.group(statements)

    def body_of(self, definition) -> list:
        """A def's statements as LibCST's body_statements gives them (units), a lambda's body as one part."""
        if type(definition) is ast.Lambda:
            return [definition.body]
        return [group for _, group in self.units(definition.body)]

    # ---- what the batched function may do ------------------------------------------------------------------

    def check_function(self, func: ast.AST, batched: Sequence[int], arguments: int | None = None) -> bool:
        """Raises Refused unless `func` is a function jax.vmap batches as the loop computes it; returns whether it
        draws random numbers."""
        qualified = self.binder.qualified(func)
        if qualified is not None:
            if qualified in VALUE_SHAPED:
                raise Refused(f"`{qualified}` returns an array whose shape depends on the values")
            if qualified.startswith(NUMERIC_NAMESPACES):
                probe = [(None, ast.Name("_batched_" if i in batched else "_"), "") for i in range(arguments or 0)]
                if self.batched_shape(qualified, probe, {"_batched_"}):
                    raise Refused(f"`{qualified}` would take a batched value as a shape or a count")
                return qualified.startswith("jax.random.")
            raise Refused(f"it calls `{qualified}`, which is not known to be pure and to batch under jax.vmap")
        definition = None
        if type(func) is ast.Lambda:
            definition = func
        elif type(func) is ast.Name:
            definition = self.purity.local_function(func)
        if definition is None:
            raise Refused(f"it calls `{self.code(func)}`, which is not known to be pure")
        params = definition.args
        if params.vararg is not None or params.kwarg is not None:
            raise Refused(f"`{self.code(func)}` takes *args or **kwargs")
        positional = [p.arg for p in (*params.posonlyargs, *params.args)]
        if arguments is not None and arguments > len(positional):
            raise Refused(f"`{self.code(func)}` takes fewer arguments than it is given")
        tainted = {positional[i] for i in batched if i < len(positional)}
        body = self.body_of(definition)
        blocker = self.batch_blocker(body, tainted, 0)
        if blocker is not None:
            raise Refused(f"`{self.code(func)}` {blocker}")
        arrays = frozenset(batched_names(body, tainted))  # rows of a JAX array and what is computed from them
        impurity = self.purity.function_impurity(definition, arrays=arrays)
        if impurity is not None:
            raise Refused(f"`{self.code(func)}` {impurity.reason}")
        return self.draws_random(body, 0)

    def check_single_result(self, func: ast.AST, batched: Sequence[int]) -> None:
        """The function must return one array: a tuple would stack into one array but vmap returns a tuple."""
        qualified = self.binder.qualified(func)
        if qualified is not None:
            if not returns_one_array(qualified):
                raise Refused(f"`{qualified}` is not known to return one array (a tuple would stack differently)")
            return
        definition = func if type(func) is ast.Lambda else self.purity.local_function(func)
        positional = [p.arg for p in (*definition.args.posonlyargs, *definition.args.args)]
        if type(definition) is ast.Lambda:
            values = [definition.body]
        else:
            values = [n.value for n in _walk_own(definition.body) if type(n) is ast.Return]
        rows = {positional[i] for i in batched if i < len(positional)}
        if not values or not all(v is not None and self.element_is_array(v, rows) for v in values):
            raise Refused(
                f"`{self.code(func)}` is not proven to return one JAX array (a tuple would stack differently)"
            )

    def batch_blocker(self, statements, tainted: set[str], depth: int) -> str | None:
        """What in `statements` fails or computes otherwise once the `tainted` names are batched tracers:
        Python control flow or conversions on them, NumPy/math on them, value-dependent shapes; calls to
        same-module functions are followed."""
        tainted = batched_names(statements, tainted)
        code = self.code
        for node in _walk_parts(statements):
            kind = type(node)
            test = None
            if kind in (ast.If, ast.While, ast.IfExp, ast.Assert):
                test = node.test
            elif kind is ast.BoolOp:
                test = node
            elif kind is ast.UnaryOp and type(node.op) is ast.Not:
                test = node
            if kind in (ast.For, ast.AsyncFor, ast.comprehension) and _batched(node.iter, tainted):
                return f"runs a Python loop over a batched value (`{snippet(code(node.iter))}`)"
            if test is not None and _batched(test, tainted):
                return f"uses a batched value in Python control flow (`{snippet(code(test))}`)"
            if kind is ast.Compare and _batched(node, tainted) and any(
                isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in node.ops
            ):
                return f"tests a batched value with `in`/`is` (`{snippet(code(node))}`)"
            if kind is ast.JoinedStr and _batched(node, tainted):
                return "formats a batched value into a string"
            if kind is ast.Subscript:
                for part in _subscript_parts(node):
                    if type(part) is ast.Slice:
                        if any(b is not None and _batched(b, tainted) for b in (part.lower, part.upper, part.step)):
                            return f"uses a batched value as a slice bound (`{snippet(code(node))}`)"
                    elif _batched(part, tainted):
                        if type(part) in (ast.Compare, ast.UnaryOp) or _has_comparison(part):
                            return f"indexes with a boolean mask, whose shape depends on the values (`{snippet(code(node))}`)"
                        known = self.purity.is_array_like(node.value) or self.is_array(node.value)
                        if not known and not _batched(node.value, tainted):
                            return f"indexes something not known to be a JAX array with a batched value (`{snippet(code(node))}`)"
            if kind is ast.Call:
                reason = self.call_blocker(node, tainted, depth)
                if reason is not None:
                    return reason
        return None

    def call_blocker(self, call: ast.Call, tainted: set[str], depth: int) -> str | None:
        code = self.code
        arguments = _arguments(call)
        batched_args = [i for i, (_, value, _) in enumerate(arguments) if _batched(value, tainted)]
        func = call.func
        if type(func) is ast.Attribute and func.attr in _CONCRETE_METHODS and _batched(func.value, tainted):
            return f"turns a batched value into a Python value (`{snippet(code(call))}`)"
        if not batched_args:
            return None
        if type(func) is ast.Name and self.binder.is_builtin(func, func.id):
            if func.id in _CONCRETE_BUILTINS:
                return f"passes a batched value to `{func.id}()`"
            return None
        qualified = self.binder.qualified(func)
        if qualified is not None:
            if qualified in VALUE_SHAPED and not any(k == "size" for k, _, _ in arguments):
                return f"calls `{code(func)}`, whose result shape depends on the values"
            if qualified == "jax.numpy.where" and len(arguments) == 1:
                return "calls `jnp.where` with one argument, whose result shape depends on the values"
            if self.batched_shape(qualified, arguments, tainted):
                return f"uses a batched value as a shape or a count (`{snippet(code(call))}`)"
            if qualified.startswith(NUMERIC_NAMESPACES):
                return None
            return f"passes a batched value to `{code(func)}`, which does not batch under jax.vmap"
        if type(func) is ast.Name:
            definition = self.purity.local_function(func)
            if definition is not None:
                if depth >= _MAX_DEPTH:
                    return f"calls `{func.id}` too deeply nested to check"
                if any(arguments[i][0] is not None or arguments[i][2] for i in batched_args):
                    return f"passes a batched value to `{func.id}` by keyword or unpacking"
                positional = [p.arg for p in (*definition.args.posonlyargs, *definition.args.args)]
                names = {positional[i] for i in batched_args if i < len(positional)}
                inner = self.batch_blocker(self.body_of(definition), names, depth + 1)
                return None if inner is None else f"calls `{func.id}`, which {inner}"
        if type(func) is ast.Attribute and func.attr in _SHAPE_METHODS:
            return f"uses a batched value as a shape or a count (`{snippet(code(call))}`)"
        if type(func) is ast.Attribute and _batched(func.value, tainted):
            return None  # a method of a batched array (`x.sum()`): the concrete ones are caught above
        return f"passes a batched value to `{code(func)}`, which is not known to batch under jax.vmap"

    @staticmethod
    def batched_shape(qualified: str, arguments, tainted: set[str]) -> bool:
        """Whether a call of `qualified` with `arguments` (`_arguments`) passes a batched value where the function
        takes a shape, a size or a count."""
        if qualified.startswith("jax.random."):
            name = qualified[len("jax.random."):]
            if name not in RANDOM_SHAPE_POSITION:
                return any(_batched(v, tainted) for _, v, _ in arguments[1:])
            position = RANDOM_SHAPE_POSITION[name]
            if position is None:
                return False
            return any(
                _batched(v, tainted) and ((k is None and i >= position) or (k is not None and k in ("shape", "num")))
                for i, (k, v, _) in enumerate(arguments)
            )
        if qualified not in SHAPE_ARGUMENTS:
            return False
        positions, keywords = SHAPE_ARGUMENTS[qualified]
        return any(
            _batched(v, tainted) and ((k is None and (i in positions or s)) or (k is not None and k in keywords))
            for i, (k, v, s) in enumerate(arguments)
        )

    def expression_impurity(self, part, arrays: frozenset[str] = frozenset()) -> str | None:
        for node in _walk_part(part):
            if type(node) is ast.Call:
                blocker = self.purity.call_blocker(node, frozenset(), arrays)
                if blocker is not None:
                    return blocker.reason
        return None

    def draws_random(self, statements, depth: int) -> bool:
        for part in statements:
            for node in _walk_part(part):
                if type(node) is not ast.Call:
                    continue
                qualified = self.binder.qualified(node.func)
                if qualified is not None and qualified.startswith("jax.random."):
                    return True
                if type(node.func) is ast.Name and depth < _MAX_DEPTH:
                    definition = self.purity.local_function(node.func)
                    if definition is not None and self.draws_random(self.body_of(definition), depth + 1):
                        return True
        return False

    # ---- shapes and dtypes of rows -------------------------------------------------------------------------

    def row_facts(self, expr, env: dict, loop: ast.For | None, index: str | None, depth: int) -> tuple[list, list]:
        """The shapes and dtypes `expr` is proven to have (facts/symbolic.py): at the loop (`loop` given), or in a
        function the loop calls (`env` holds its parameters' facts; other names are unknown)."""
        symbolic = self.symbolic
        if depth > 8:
            return [], []
        if is_number(expr):
            return [()], []
        kind = type(expr)
        if kind is ast.Name:
            if expr.id in env:
                return env[expr.id]
            if loop is not None and expr.id == index:
                return [()], []  # a number (an int32 scalar in the rewrite)
            if loop is not None and expr.id != index and expr.id not in self.facts.loop(loop).modified:
                key = symbolic.key(expr.id, loop)
                if key is not None:
                    return [(("spread", key, 0),)], [("dtype-of", key)]
            return [], []
        if kind is ast.Subscript:
            if loop is not None and self.row_subscript(expr, index) and expr.value.id not in env:
                key = symbolic.key(expr.value.id, loop)
                if key is not None:
                    return [(("spread", key, 1),)], [("dtype-of", key)]
            return [], []
        if kind is ast.Call and not any(k is not None or s for k, _, s in _arguments(expr)):
            func = expr.func
            if type(func) is ast.Attribute and func.attr in REDUCTION_METHODS and not expr.args:
                if self.binder.qualified(func) is None:
                    return [()], []  # `x.sum()`: a 0-d array
            callee = self.binder.callee(expr)
            if callee in WHOLE_REDUCTIONS and len(expr.args) == 1:
                return [()], []
            definition = self.purity.local_function(func) if type(func) is ast.Name else None
            if definition is not None:
                return self.call_facts(definition, expr, env, loop, index, depth)
            sampler = POSITIONAL_SAMPLERS.get(callee)
            if sampler is not None and len(expr.args) == sampler[1]:
                # `jax.random.normal(key, shape)`: that shape, the default dtype of its kind.
                shape, dtype_kind = expr.args[sampler[0]], ("default", sampler[2])
                if type(shape) is ast.Attribute and shape.attr == "shape" and type(shape.value) is ast.Name:
                    if shape.value.id in env:
                        return [s for s in env[shape.value.id][0] if s != ()], [dtype_kind]
                if loop is not None and not mentions(shape, set(env) | {index}):
                    parts = symbolic.shape_parts(shape, loop)
                    return ([parts] if parts is not None else []), [dtype_kind]
                return [], [dtype_kind]

        def astype_dtype(dtype):
            token = symbolic.dtype_token(dtype, loop) if loop is not None else None
            if token is None and loop is None:
                token = symbolic.dtype_token(dtype, symbolic.statement(dtype) or dtype)
            if token is None or (token[0] == "dtype-of" and (loop is None or mentions(dtype, set(env)))):
                return None
            return token

        facts = symbolic.elementwise_facts(expr, lambda e: self.row_facts(e, env, loop, index, depth + 1), astype_dtype)
        return facts if facts is not None else ([], [])

    def call_facts(self, definition, call: ast.Call, env, loop, index, depth) -> tuple[list, list]:
        """Facts of what a same-module function returns, from its arguments' facts: a lambda, or a `def` of
        `name = value` lines and one final `return`."""
        params = definition.args
        if params.vararg is not None or params.kwarg is not None or params.kwonlyargs:
            return [], []
        positional = [p.arg for p in (*params.posonlyargs, *params.args)]
        if len(positional) != len(call.args):
            return [], []
        inner = {name: self.row_facts(a, env, loop, index, depth + 1) for name, a in zip(positional, call.args)}
        if type(definition) is ast.Lambda:
            return self.row_facts(definition.body, inner, None, None, depth + 1)
        body = [group for _, group in self.units(definition.body)]
        if body and _is_docstring(body[0]):
            body = body[1:]
        for unit in body[:-1]:
            assign = _single_name_assign(unit)
            if assign is None:
                return [], []
            inner[assign.targets[0].id] = self.row_facts(assign.value, inner, None, None, depth + 1)
        last = body[-1] if body else None
        small = last[0] if last is not None and len(last) == 1 else None
        if type(small) is not ast.Return or small.value is None:
            return [], []
        return self.row_facts(small.value, inner, None, None, depth + 1)

    # ---- where things are ------------------------------------------------------------------------------------

    def block_units(self, loop: ast.stmt) -> tuple[list[tuple[str, list[ast.stmt]]], int | None]:
        """The units of the loop's block, and the loop's position among them."""
        parent = self.binder.parents.get(loop)
        block = block_of(loop, parent) if parent is not None else None
        units = self.units(block or [])
        position = next((i for i, (_, unit) in enumerate(units) if unit[0] is loop), None)
        return units, position

    def creation(self, loop: ast.For, collector: str) -> ast.Assign | None:
        """The `ys = []` statement just before the loop."""
        units, position = self.block_units(loop)
        if not position:
            return None
        kind, before = units[position - 1]
        if kind != "line" or len(before) != 1:
            return None
        small = before[0]
        if not (type(small) is ast.Assign and len(small.targets) == 1 and type(small.targets[0]) is ast.Name):
            return None
        if small.targets[0].id != collector or not (type(small.value) is ast.List and not small.value.elts):
            return None
        return small

    def buffer_creation(self, loop: ast.For, out: str) -> ast.Assign | None:
        """The `out = <call>` line before the loop in its block, with nothing in between mentioning `out`."""
        units, position = self.block_units(loop)
        if not position:
            return None
        for kind, before in reversed(units[:position]):
            if not mentions(before, {out}):
                continue
            assign = _single_name_assign(before) if kind == "line" else None
            if assign is None or assign.targets[0].id != out or type(assign.value) is not ast.Call:
                return None
            return assign
        return None

    def after(self, node: ast.AST, loop: ast.For) -> bool:
        """Whether `node` is in a statement that follows the loop in the loop's own block."""
        parents = self.binder.parents
        holder = parents.get(loop)
        block = block_of(loop, holder) if holder is not None else None
        if block is None:
            return False
        current = node
        while current is not None and not (parents.get(current) is holder and any(s is current for s in block)):
            current = parents.get(current)
        if current is None:
            return False
        position = next(i for i, s in enumerate(block) if s is current)
        return position > next(i for i, s in enumerate(block) if s is loop)

    def single_stack(self, loop: ast.For, collector: str, creation: ast.Assign):
        """The one `jnp.stack(ys)` (or `jnp.array(ys)`) that reads the list: (the call, its name, its axis);
        None when the list is bound elsewhere or read otherwise (`ys[-1]`, `len(ys)`, returned as a list)."""
        target = creation.targets[0]
        scope = self.binder.scope_of.get(target)
        if scope is None or scope.kind == "class":
            return None
        bindings = scope.resolve(collector)
        if len(bindings) != 1 or bindings[0].scope is not scope:
            return None
        accesses = self.binder.references(scope, collector)
        if len(accesses) != 2:
            return None
        parents = self.binder.parents
        found = None
        for name in accesses:
            holder = parents.get(name)
            if type(holder) is ast.Attribute and holder.attr == "append":
                continue  # the append itself
            if type(holder) is not ast.Call or not holder.args or holder.args[0] is not name:
                return None
            callee = self.binder.callee(holder)
            if callee not in STACKING:
                return None
            axis = stack_axis(holder, callee)
            if axis is None or not self.after(holder, loop):
                return None
            found = (holder, STACKING[callee], axis)
        return found

    def statement(self, node: ast.AST) -> list | None:
        """The LibCST simple statement line holding `node` (a unit), None in a compound statement or a suite."""
        statement = self.symbolic.statement(node)
        if statement is None:
            return None
        kind, unit = self.symbolic.unit(statement)
        return unit if kind == "line" else None

    def in_nested_scope(self, node: ast.AST, statement: list) -> bool:
        """Whether `node` sits in a lambda or comprehension inside `statement`."""
        parents = self.binder.parents
        current = parents.get(node)
        while current is not None and not any(current is s for s in statement):
            if type(current) in _SCOPES:
                return True
            current = parents.get(current)
        return False

    def can_define_before(self, statement: ast.stmt) -> bool:
        """A def can go before a statement of a function body or of the module (not a class body)."""
        parents = self.binder.parents
        owner = parents.get(statement)
        if type(owner) is ast.Module:
            return True
        while owner is not None and not isinstance(owner, (*_FUNCTIONS, ast.ClassDef, ast.Module)):
            owner = parents.get(owner)
        return isinstance(owner, (*_FUNCTIONS, ast.Module))


def _single_name_assign(unit) -> ast.Assign | None:
    """`name = value` as the only statement of a line."""
    if len(unit) == 1 and type(unit[0]) is ast.Assign and len(unit[0].targets) == 1 and type(unit[0].targets[0]) is ast.Name:
        return unit[0]
    return None


def _is_docstring(unit) -> bool:
    return len(unit) == 1 and type(unit[0]) is ast.Expr and type(unit[0].value) is ast.Constant and type(unit[0].value.value) is str


def _append_of(kind: str, unit) -> tuple[str, ast.expr] | None:
    """(`ys`, `e`) of a statement `ys.append(e)`."""
    if kind != "line" or len(unit) != 1 or type(unit[0]) is not ast.Expr:
        return None
    call = unit[0].value
    if not (type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr == "append"):
        return None
    arguments = _arguments(call)
    if type(call.func.value) is not ast.Name or len(arguments) != 1:
        return None
    keyword, value, star = arguments[0]
    if keyword is not None or star:
        return None
    return call.func.value.id, value


def _simple_assignment(unit) -> str | None:
    """Why a statement before the `.append` cannot move into a local function as is (None: it can)."""
    if all(type(s) is ast.Assign and all(type(t) in (ast.Name, ast.Tuple) for t in s.targets) for s in unit):
        return None
    return "the body has statements other than assignments to names before the `.append`"


# ---- JF301's decision on one candidate ------------------------------------------------------------------------


class _Decision:
    def __init__(self, batches: BatchFacts) -> None:
        self.b = batches
        self.facts = batches.facts
        self.code = batches.code
        self.arange_used = False
        self.imports: list = []

    def _spelled(self, qualified: str) -> str:
        text, needed = spelled_with_import(self.facts.binder, qualified)
        if needed is not None and needed not in self.imports:
            self.imports.append(needed)
        return text

    def _unsafe_note(self) -> str:
        return INDEX_NOTE if self.arange_used else ROUNDING_NOTE

    # ---- a stacked comprehension or map ------------------------------------------------------------------

    def stack_call(self, node: ast.Call) -> Outcome | None:
        b = self.b
        callee = self.facts.binder.callee(node)
        arguments = _arguments(node)
        if callee not in STACKING or not arguments:
            return None
        keyword, value, star = arguments[0]
        out_axis = stack_axis(node, callee)
        if keyword is not None or star or out_axis is None:
            return None
        batch = b.batch(value)
        if batch is None:
            return None
        assumed = b.assumed_rows(batch)
        if assumed is None:
            return None
        shown = STACKING[callee]
        walked = "an index" if all(isinstance(a, Count) for a in batch.arrays) else "the rows of an array"
        message = f"{shown} of per-element results over {walked}: jax.vmap computes them in one batched call"
        try:
            plan = self._plan(node, batch, out_axis)
        except Refused as refused:
            if not index_only(batch):
                return Outcome(node, f"{message}; not rewritten: {refused}")
            return Outcome(node, declined=f"not rewritten: {refused}; not reported: over an index alone this is usually host-side arithmetic")
        if plan.spec.random:
            message += RANDOM_NOTE
        if isinstance(assumed, (RecordedArray, CalledArray)):
            message += "; " + assumed.evidence()
        elif assumed[0]:
            array, why, use = assumed
            message += (
                f"; assumes `{array}` is an array: {why} (given a tuple, list or dict, jax.vmap would walk its leaves "
                f"and `{snippet(self.code(use))}` raises at trace time)"
            )
        return Outcome(node, message + self._unsafe_note(), plan)

    def _plan(self, node: ast.Call, batch: Batch, out_axis: int) -> Plan:
        spec = self._spec(batch)
        vmap_call = self._vmap_text(spec, out_axis)
        if spec.function is None:
            self._imports()
            return Plan("replace", node, vmap_call, spec, self.imports)
        b = self.b
        statement = b.statement(node)
        if statement is None or not b.can_define_before(statement[0]) or b.in_nested_scope(node, statement):
            raise Refused("the element is not a single call, and its statement cannot take a local function before it")
        self._imports()
        return Plan("define", node, vmap_call, spec, self.imports, statement=statement)

    # ---- a loop appending, a loop writing rows -------------------------------------------------------------

    def loop(self, node: ast.For) -> Outcome | None:
        """`ys = []`, `for x in xs: ...; ys.append(e)`, then `jnp.stack(ys)`: the loop form, when nothing
        flows from one element to the next (a loop that carries state is JF102's)."""
        b, facts = self.b, self.facts
        if node.orelse:
            return None
        groups = b.units(node.body)
        if not groups or groups[0][0] == "suite":
            return None  # LibCST's one-line suite is one statement, neither an append nor a row write
        statements = [unit for _, unit in groups]
        appended = _append_of(*groups[-1])
        if appended is None:
            return self._row_loop(node, groups)
        collector, element = appended
        batch = b.iteration(node.target, node.iter, element, statements[:-1])
        if batch is None:
            return None
        batch.append = statements[-1]
        unproven = [a for a in batch.arrays if not (isinstance(a, Count) or b.is_array(a))]
        recorded = [facts.arrays.argument_evidence(a) for a in unproven]
        if None in recorded:
            return None
        creation = b.creation(node, collector)
        if creation is None:
            return None
        stack = b.single_stack(node, collector, creation)
        if stack is None:
            return None
        stack_call, shown, out_axis = stack
        flow = facts.loop(node)
        if flow.carried or flow.targets_live_out or flow.declared:
            return Outcome(node.iter, declined="a value flows from one step to the next, or the loop variable is read after the loop: not independent steps")
        function = facts.enclosing_function(node)
        if isinstance(function, _FUNCTIONS):
            captured = set(block_activity(function.body).captured)
            if captured & {*flow.modified, *flow.targets}:
                return None  # a closure reads a name the loop assigns: it would stop seeing the loop's values
        message = (
            f"a loop appending per-element results that are stacked with {shown}: jax.vmap computes them in one "
            "batched call"
        )
        try:
            spec = self._spec(batch)
            reason = next((_simple_assignment(st) for st in batch.statements if _simple_assignment(st)), None)
            if reason:
                raise Refused(reason)
            if not b.can_define_before(node) and spec.function is not None:
                raise Refused("the loop's block cannot take a local function")
        except Refused as refused:
            if not index_only(batch):
                return Outcome(node, f"{message}; not rewritten: {refused}")
            return Outcome(node.iter, declined=f"not rewritten: {refused}; not reported: over an index alone this is usually host-side arithmetic")
        if spec.random:
            message += RANDOM_NOTE
        for evidence in recorded:
            message += "; " + evidence.evidence()
        vmap_call = self._vmap_text(spec, out_axis)
        self._imports()
        plan = Plan("append", node, vmap_call, spec, self.imports, creation=creation, stack_call=stack_call, collector=collector)
        return Outcome(node, message + self._unsafe_note(), plan)

    def _row_loop(self, loop: ast.For, groups) -> Outcome | None:
        """`out = jnp.zeros((n, d))`, `for i in range(n): out = out.at[i].set(f(xs[i]))`."""
        b = self.b
        if type(loop.target) is not ast.Name:
            return None
        iterable = loop.iter
        if not (type(iterable) is ast.Call and b.builtin(iterable.func, "range") and len(_arguments(iterable)) == 1):
            return None
        if _arguments(iterable)[0][0] is not None or _arguments(iterable)[0][2]:
            return None
        statements = [unit for _, unit in groups]
        index = loop.target.id
        write = _single_name_assign(statements[-1]) if groups[-1][0] == "line" else None
        value = row_write(write.value, index) if write is not None else None
        if value is None or write.targets[0].id != write.value.func.value.value.value.id:
            return None
        out = write.targets[0].id
        creation = b.buffer_creation(loop, out)
        if creation is None:
            return None
        message = (
            f"a loop writing each row of `{out}` from one element of the batch: jax.vmap computes the rows in one "
            "batched call"
        )
        try:
            cast, spec = self._row_loop_plan(loop, statements, index, out, value, creation)
        except Refused as refused:
            return Outcome(loop, f"{message}; not rewritten: {refused}")
        except _NotThis:
            return None
        if spec.random:
            message += RANDOM_NOTE
        vmap_call = self._vmap_text(spec, 0)
        self._imports()
        plan = Plan("rows", loop, vmap_call, spec, self.imports, creation=creation, collector=out, cast=cast)
        return Outcome(loop, message + self._unsafe_note(), plan)

    def _row_loop_plan(self, loop, statements, index, out, value, creation):
        b, facts, symbolic = self.b, self.facts, self.b.symbolic
        buffer_call = creation.value
        flow = facts.loop(loop)
        if flow.declared:
            raise Refused("the loop assigns a global or nonlocal name")
        if flow.targets_live_out:
            raise Refused(f"the index `{index}` is read after the loop")
        if any(n != out for n in flow.carried):
            raise _NotThis()  # state flows from one step to the next: a scan or a fori_loop (JF102, JF101)
        function = facts.enclosing_function(loop)
        if isinstance(function, _FUNCTIONS):
            captured = set(block_activity(function.body).captured)
            if captured & {*flow.modified, *flow.targets}:
                raise Refused("a closure reads a name the loop assigns")
        before = statements[:-1]
        if mentions(before, {out}) or mentions(value, {out}):
            raise _NotThis()  # rows computed from the buffer's earlier rows: a scan, not a batch
        if any(
            out in target_names(t) for n in _walk_parts(before) if type(n) is ast.Assign for t in n.targets
        ):
            raise Refused(f"the body assigns `{out}` besides writing its row")
        reason = next((_simple_assignment(st) for st in before if _simple_assignment(st)), None)
        if reason:
            raise Refused(reason.replace("`.append`", f"row written into `{out}`"))
        count = loop.iter.args[0]
        trip = symbolic.dim(count, loop)
        buffer = symbolic.fresh(buffer_call, creation, integer=trip)
        if isinstance(buffer, str):
            raise _NotThis()  # `out` starts as something else than a fresh array: not this pattern
        if trip is None or buffer.leading is None or buffer.leading != trip:
            if trip is not None and trip[0] == "const" and buffer.leading is not None and buffer.leading[0] == "const":
                raise _NotThis()  # a buffer filled in part on purpose
            raise Refused(
                f"nothing proves that the loop's `{self.code(count)}` steps write "
                f"every row of `{out}` (`{snippet(self.code(buffer_call))}`)"
            )
        batch = Batch(value, [index], [Count(self.code(count))], statements=before)
        parts = (*before, value)
        rows = [s for s in _walk_parts(parts) if b.row_subscript(s, index)]
        if not _count_names(parts, index):
            raise Refused(f"the rows do not depend on the index `{index}`")
        if b.indexes_containers(index, parts):
            raise _NotThis()  # copying items of Python lists or NumPy arrays into a buffer: host-side, no batch
        if rows and len({r.value.id for r in rows}) == 1 and not b.indexes_other(index, parts, rows[0].value):
            array = rows[0].value
            if (
                array.id not in flow.modified
                and b.is_array(array)
                and trip in symbolic.leading_dims(array.id, loop)
            ):
                batch = Batch(value, [index], [array], index=index, statements=before, count=count)
        for row in rows:
            if row.value.id in flow.modified or row.value.id == out:
                raise Refused(f"the loop assigns `{row.value.id}`, whose rows it reads")
        batch.append = statements[-1]
        spec = self._spec(batch)
        env: dict = {}
        for unit in before:
            assign = unit[0]
            found = b.row_facts(assign.value, env, loop, index, 0)
            for target in assign.targets:
                for name in target_names(target):
                    env[name] = found if type(target) is ast.Name else ([], [])
        shapes, dtypes = b.row_facts(value, env, loop, index, 0)
        if buffer.row != () and (buffer.row is None or not any(same_shape(buffer.row, s) for s in shapes)):
            raise Refused(
                f"nothing proves that `{snippet(self.code(value))}` has the shape of a row of `{out}` "
                "(`.at[i].set` broadcasts into the row, jax.vmap would stack it as it is)"
            )
        cast = None
        if buffer.dtype is None or buffer.dtype not in dtypes:
            cast = self._cast_text(buffer, loop)
            if cast is None:
                raise Refused(f"nothing proves that the rows have the dtype of `{out}`, and that dtype cannot be written here")
        return cast, spec

    def _cast_text(self, buffer: FreshBuffer, loop: ast.For) -> str | None:
        """The buffer's dtype written so that it means the same where the loop was."""
        symbolic = self.b.symbolic
        spelling = buffer.spelling
        if spelling is None:
            return None
        if spelling[0] == "kind":
            return spelling[1]
        if spelling[0] == "dtype-of":
            _, array, key = spelling
            return f"{array.id}.dtype" if key is not None and symbolic.key(array.id, loop) == key else None
        token = buffer.dtype
        if token is None:
            return None
        if token[0] == "dtype-of":
            name = spelling[1].value.id  # `x.dtype`
            return f"{name}.dtype" if symbolic.key(name, loop) == token[1] else None
        return self.code(spelling[1])

    # ---- what jax.vmap maps ------------------------------------------------------------------------------

    def _spec(self, batch: Batch) -> Spec:
        b, code = self.b, self.code
        self.arange_used = False
        if batch.mapped is not None:
            positions = list(range(len(batch.arrays)))
            random = b.check_function(batch.mapped, positions, arguments=len(batch.arrays))
            b.check_single_result(batch.mapped, positions)
            return Spec(code(batch.mapped), [0] * len(positions), [self._argument(a) for a in batch.arrays], random)
        element = batch.element
        everything = [*batch.statements, element]
        if any(type(n) is ast.NamedExpr for n in _walk_parts(everything)):
            raise Refused("the element assigns with `:=`")
        rows = self._rows(batch)
        single = None if batch.statements else self._single_call(element, batch, rows)
        if single is not None:
            func, axes, arguments = single
            for _, value, _ in _arguments(element):
                impurity = b.expression_impurity(value)
                if impurity is not None:
                    raise Refused(f"an argument {impurity}")
            batched = [i for i, axis in enumerate(axes) if axis == 0]
            random = b.check_function(func, batched, arguments=len(axes))
            counted = [a for a in batch.arrays if isinstance(a, Count)]
            if batch.numbered:
                counted.append(Count(code(batch.count)))
            counts = {self._argument(a) for a in counted}
            b.check_single_result(func, [i for i in batched if arguments[i] not in counts])  # an index is no array
            return Spec(code(func), axes, arguments, random)
        params, arrays, row = self._body_parameters(batch)
        checked = [*batch.statements, batch.element]
        tainted = {batch.index, batch.arrays[0].id} if batch.index is not None else set(params)
        counted = {v for v, a in zip(batch.variables, batch.arrays) if isinstance(a, Count)}
        rows_known = {batch.arrays[0].id} if batch.index is not None else set(params) - counted  # an index is no array
        blocker = b.batch_blocker(checked, tainted, 0)
        if blocker is not None:
            raise Refused(blocker)
        arrays_known = frozenset(batched_names(checked, tainted))
        for part in checked:
            purity = b.expression_impurity(part, arrays_known)
            if purity is not None:
                raise Refused(f"the body {purity}")
        if not b.element_is_array(checked[-1], rows_known):
            raise Refused("the element is not proven to be one JAX array (a tuple would stack differently)")
        random = b.draws_random(checked, 0)
        name = self.facts.fresh_names.take("body", "batch_body", "per_element")
        function = Function(name, params, list(batch.statements), element, row, batch.append)
        return Spec(name, [0] * len(arrays), [self._argument(a) for a in arrays], random, function)

    def _vmap_text(self, spec: Spec, out_axis: int) -> str:
        vmap = self._spelled("jax.vmap")
        in_axes = "" if all(axis == 0 for axis in spec.axes) else f", in_axes={tuple_text(spec.axes)}"
        out_axes = "" if out_axis == 0 else f", out_axes={out_axis}"
        return f"{vmap}({spec.func}{in_axes}{out_axes})({', '.join(spec.arguments)})"

    def _imports(self) -> None:
        """The imports the fix needs: jax.vmap's, then jnp.arange's where the fix maps an index."""
        found = []
        _, needed = spelled_with_import(self.facts.binder, "jax.vmap")
        if needed:
            found.append(needed)
        if self.arange_used:
            _, arange = spelled_with_import(self.facts.binder, "jax.numpy.arange")
            if arange and arange not in found:
                found.append(arange)
        self.imports = found

    def _argument(self, array) -> str:
        """The code of what jax.vmap maps: an array, or `jnp.arange(n)` for an index used as a number."""
        if not isinstance(array, Count):
            return self.code(array)
        arange, _ = spelled_with_import(self.facts.binder, "jax.numpy.arange")
        self.arange_used = True
        return f"{arange}({array.count})"

    def _rows(self, batch: Batch) -> dict:
        b = self.b
        if batch.index is None:
            return dict(zip(batch.variables, batch.arrays))
        array = batch.arrays[0]
        parts = [*batch.statements, batch.element]
        uses = _count_names(parts, batch.index)
        rows = [s for s in _walk_parts(parts) if b.is_row(s, batch.index, array)]
        if uses != len(rows):
            # The index is used as a number too: map it over `jnp.arange(n)`, and read the rows in the body.
            if batch.count is None:
                raise Refused(f"the index `{batch.index}` is used otherwise than as `{self.code(array)}[{batch.index}]`")
            if rows and not b.indexes_other(batch.index, parts, array):
                batch.numbered = True  # map the rows of `xs` and the index (an empty `xs` stays empty)
                return {batch.index: array}
            batch.arrays = [Count(self.code(batch.count))]
            batch.index = None
            return {batch.variables[0]: batch.arrays[0]}
        return {batch.index: array}

    def _single_call(self, element, batch: Batch, rows):
        """`f(a, x)`: the function, each argument's axis, and the arguments of the batched call; None when the
        element is not one call whose arguments are either a whole row or free of the loop's variables."""
        b = self.b
        if type(element) is not ast.Call:
            return None
        variables = set(batch.variables)
        if mentions(element.func, variables):
            return None
        axes, arguments = [], []
        for keyword, value, star in _arguments(element):
            if keyword is not None or star:
                return None  # jax.vmap maps keyword arguments along axis 0: keep them in a local function
            if batch.index is None and type(value) is ast.Name and value.id in variables:
                axes.append(0)
                arguments.append(self._argument(rows[value.id]))
            elif batch.index is not None and b.is_row(value, batch.index, batch.arrays[0]):
                axes.append(0)
                arguments.append(self.code(batch.arrays[0]))
            elif batch.numbered and type(value) is ast.Name and value.id == batch.index:
                axes.append(0)
                arguments.append(self._argument(Count(self.code(batch.count))))
            elif mentions(value, variables):
                return None
            else:
                axes.append(None)
                arguments.append(self.code(value))
        if 0 not in axes:
            raise Refused("the element does not depend on the loop's variable")
        return element.func, axes, arguments

    def _body_parameters(self, batch: Batch):
        """Parameters of the local function, the arrays it is mapped over, and the rows it reads as a parameter."""
        if batch.index is None:
            return list(batch.variables), list(batch.arrays), None
        array = batch.arrays[0]
        row = self.facts.fresh_names.take(*row_names(array.id))
        params, arrays = [row], [array]
        if batch.numbered:
            params, arrays = [batch.index, row], [Count(self.code(batch.count)), array]
        return params, arrays, (batch.index, array.id, row)


_BUILTINS = frozenset(dir(builtins))


def tuple_text(axes: Sequence[int | None]) -> str:
    parts = ["None" if axis is None else str(axis) for axis in axes]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def row_names(array: str) -> tuple[str, ...]:
    """Names for one row of `array`: `xs` → `x`, else `array_row`."""
    names = []
    singular = array[:-1]
    if array.endswith("s") and not array.endswith("ss") and singular.isidentifier() and singular not in _BUILTINS:
        names.append(array[:-1])
    names.append(f"{array}_row")
    return tuple(names)
