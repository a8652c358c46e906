"""Which loop or comprehension walks the rows of arrays (JF301): what each variable walks, which arguments
are batched, whether each step is independent of the others and may be mapped by jax.vmap, and whether a buffer
is fresh and written once per row. Plain answers (`Batch`, `Count`, `Refused`) that the rule turns into a fix."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.arrays import ARRAY_VALUE, CalledArray, RecordedArray, loud_use
from jaxfix.analysis.dataflow import Blocker, body_statements, returns_one_array
from jaxfix.analysis.metadata import children
from jaxfix.analysis.shapes import REDUCTION_METHODS
from jaxfix.analysis.syntax import is_docstring, is_number, target_names, walk
from jaxfix.facts.knowledge.jax import (
    NUMERIC_NAMESPACES, POSITIONAL_SAMPLERS, RANDOM_SHAPE_POSITION, SHAPE_ARGUMENTS, STACKING, VALUE_SHAPED,
    WHOLE_REDUCTIONS,
)
from jaxfix.facts.model import ModuleModel

_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})
_SHAPE_METHODS = frozenset({"reshape", "repeat", "broadcast_to"})
_CONCRETE_BUILTINS = frozenset({"int", "float", "bool", "complex", "len", "range", "list", "tuple", "str", "repr",
                                "print", "iter", "next", "sorted", "set", "dict", "enumerate", "zip", "map",
                                "filter", "round", "divmod", "hash", "format", "min", "max", "sum", "any", "all"})  # fmt: skip
_CONCRETE_METHODS = frozenset({"item", "tolist", "__index__", "__bool__", "__int__", "__float__"})
_MAX_DEPTH = 4  # how deep same-module calls are followed
_SHORT = 10  # `range(k)` with a literal k under this stays a Python loop (as JF101 and JF102 leave it)


class Refused(Exception):
    """What stops the rewrite, in words for the diagnostic."""


@dataclass(frozen=True)
class Count:
    """`jnp.arange(count)`: what an index variable used as a number is mapped over (`count` is code)."""

    count: str


@dataclass
class Batch:
    """A comprehension (or `map`) over the rows of arrays: the per-element expression and what it iterates."""

    element: cst.BaseExpression | None  # None for `map(fn, ...)`
    variables: list[str]  # the comprehension's variables (for an index loop: the index)
    arrays: list[cst.BaseExpression]  # what each variable walks (an index loop: the indexed array)
    index: str | None = None  # `for i in range(len(xs))`: the index, used only as `xs[i]`
    count: cst.BaseExpression | None = None  # an index loop's `range(count)` argument
    numbered: bool = False  # an index loop whose index is also used as a number: mapped over jnp.arange too
    mapped: cst.BaseExpression | None = None  # the function given to `map`
    statements: list = field(default_factory=list)  # a `for` loop's statements before the `.append(element)`
    append: cst.SimpleStatementLine | None = None  # the line storing the element (`ys.append(element)`, a row write)


class BatchAnalysis:
    """The batches of one module, asked by node (`ModuleContext.batches`)."""

    def __init__(self, context: ModuleModel) -> None:
        self.context = context

    def assumed_rows(self, batch: "Batch") -> tuple | RecordedArray | CalledArray | None:
        """(name, why, use) when the one array a comprehension walks is not proven to be an array but is a
        non-static argument of a traced function or a library call's output that is one array by convention (a
        Flax module's `apply`), and the element uses the variable in a way that raises on a tuple, list or dict
        (where jax.vmap would map a pytree's leaves, the comprehension its elements); ("", None, None) when
        every array is proven; else what a recorded run saw, where it saw an array there in every call (a tuple
        would compute other values: the fix says it rests on the record); None when none of these."""
        if all(isinstance(array, Count) or self.is_array(array) for array in batch.arrays):
            return ("", None, None)
        if batch.element is None or batch.index is not None or batch.statements or len(batch.arrays) != 1:
            return None
        (array,), (variable,) = batch.arrays, batch.variables
        function = self.context.arrays.traced_argument(array)
        output = self.context.arrays.library_output(array) if function is None else None
        use = loud_use(self.context, variable, batch.element) if function is not None or output is not None else None
        if use is None:
            return self.context.arrays.argument_evidence(array)
        if function is not None:
            return (array.value, f"a non-static argument of `{function}`, which JAX traces", use)
        return (array.value, f"the output of `{output}`, one array by the library's convention", use)

    def row_subscript(self, node: cst.CSTNode, index: str) -> bool:
        return (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Name)
            and node.slice[0].slice.value.value == index
        )

    def row_facts(self, expr, env: dict, loop: cst.For | None, index: str | None, depth: int) -> tuple[list, list]:
        """The shapes and dtypes `expr` is proven to have (see jaxfix.analysis.shapes): at the loop (`loop`
        given), or in a function the loop calls (`env` holds its parameters' facts; other names are unknown)."""
        symbolic = self.context.shapes.symbolic
        if depth > 8:
            return [], []
        if is_number(expr):
            return [()], []
        if isinstance(expr, cst.Name):
            if expr.value in env:
                return env[expr.value]
            if loop is not None and expr.value == index:
                return [()], []  # a number (an int32 scalar in the rewrite)
            if loop is not None and expr.value != index and expr.value not in self.dataflow().loop(loop).modified:
                key = symbolic.key(expr.value, loop)
                if key is not None:
                    return [(("spread", key, 0),)], [("dtype-of", key)]
            return [], []
        if isinstance(expr, cst.Subscript):
            if loop is not None and self.row_subscript(expr, index) and expr.value.value not in env:
                key = symbolic.key(expr.value.value, loop)
                if key is not None:
                    return [(("spread", key, 1),)], [("dtype-of", key)]
            return [], []
        if isinstance(expr, cst.Call) and not any(a.star or a.keyword is not None for a in expr.args):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in REDUCTION_METHODS and not expr.args:
                if self.context.names.qualified(func) is None:
                    return [()], []  # `x.sum()`: a 0-d array
            if self.context.names.callee(expr) in WHOLE_REDUCTIONS and len(expr.args) == 1:
                return [()], []
            definition = self.dataflow().local_function(func) if isinstance(func, cst.Name) else None
            if definition is not None:
                return self.call_facts(definition, expr, env, loop, index, depth)
            callee = self.context.names.callee(expr)
            sampler = POSITIONAL_SAMPLERS.get(callee)
            if sampler is not None and len(expr.args) == sampler[1]:
                # `jax.random.normal(key, shape)`: that shape, the default dtype of its kind.
                shape, kind = expr.args[sampler[0]].value, ("default", sampler[2])
                if isinstance(shape, cst.Attribute) and shape.attr.value == "shape" and isinstance(shape.value, cst.Name):
                    if shape.value.value in env:
                        return [s for s in env[shape.value.value][0] if s != ()], [kind]
                if loop is not None and not mentions(shape, set(env) | {index}):
                    parts = symbolic.shape_parts(shape, loop)
                    return ([parts] if parts is not None else []), [kind]
                return [], [kind]

        def astype_dtype(dtype):
            token = symbolic.dtype_token(dtype, loop) if loop is not None else None
            if token is None and loop is None:
                token = symbolic.dtype_token(dtype, self.statement(dtype) or dtype)
            if token is None or (token[0] == "dtype-of" and (loop is None or mentions(dtype, set(env)))):
                return None
            return token

        facts = symbolic.elementwise_facts(expr, lambda e: self.row_facts(e, env, loop, index, depth + 1), astype_dtype)
        return facts if facts is not None else ([], [])

    def call_facts(self, definition, call: cst.Call, env, loop, index, depth) -> tuple[list, list]:
        """Facts of what a same-module function returns, from its arguments' facts: a lambda, or a `def` of
        `name = value` lines and one final `return`."""
        params = definition.params
        if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None or params.kwonly_params:
            return [], []
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        if len(positional) != len(call.args):
            return [], []
        inner = {name: self.row_facts(a.value, env, loop, index, depth + 1) for name, a in zip(positional, call.args)}
        if isinstance(definition, cst.Lambda):
            return self.row_facts(definition.body, inner, None, None, depth + 1)
        body = list(body_statements(definition.body))
        if body and is_docstring(body[0]):
            body = body[1:]
        for statement in body[:-1]:
            assign = single_name_assign(statement)
            if assign is None:
                return [], []
            inner[assign.targets[0].target.value] = self.row_facts(assign.value, inner, None, None, depth + 1)
        last = body[-1] if body else None
        small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
        if not isinstance(small, cst.Return) or small.value is None:
            return [], []
        return self.row_facts(small.value, inner, None, None, depth + 1)

    def loop_batch(self, loop: cst.For, element, statements) -> Batch | None:
        return self.iteration(loop.target, loop.iter, element, statements)

    def iteration(self, target, iterable, element, statements=()) -> Batch | None:
        """What a `for` clause walks: the rows of arrays (`x in xs`, `zip`), an index (`range(len(xs))` read as
        `xs[i]`), a number (`range(n)`), or both (`enumerate(xs)`)."""
        statements = list(statements)
        if isinstance(target, cst.Name):
            index_array = self.index_range(iterable)
            if index_array is not None:
                return Batch(element, [target.value], [index_array], index=target.value, statements=statements,
                              count=iterable.args[0].value)  # fmt: skip
            count = self.range_count(iterable)
            if count is not None:
                if self.indexes_containers(target.value, [*statements, element]):
                    return None  # gathering items of Python lists (`results[i][k]`): host-side plumbing, no batch
                return Batch(element, [target.value], [Count(self.context.code_for(count))], statements=statements)
            return Batch(element, [target.value], [iterable], statements=statements)
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(iterable, cst.Call):
            return None
        elements = [e.value for e in target.elements]
        if not all(isinstance(e, cst.Name) for e in elements) or any(isinstance(e, cst.StarredElement) for e in target.elements):
            return None
        args = iterable.args
        if any(a.keyword is not None or a.star for a in args):
            return None
        if self.builtin(iterable.func, "zip") and len(args) == len(elements):
            return Batch(element, [e.value for e in elements], [a.value for a in args], statements=statements)
        if self.builtin(iterable.func, "enumerate") and len(args) == 1 and len(elements) == 2:
            array = args[0].value
            if not isinstance(array, cst.Name):
                return None
            count = Count(f"len({array.value})")
            return Batch(element, [e.value for e in elements], [count, array], statements=statements)
        return None

    def indexes_other(self, index: str, parts, array: cst.Name) -> bool:
        """Whether the index subscripts anything else than `array[index]`."""
        return any(
            isinstance(node, cst.Subscript)
            and any(mentions(element, {index}) for element in node.slice)
            and not self.is_row(node, index, array)
            for part in parts
            for node in walk(part)
        )

    def indexes_containers(self, index: str, parts) -> bool:
        """Whether the index subscripts a name not proven to hold a JAX array (a list, a dict, a tuple)."""
        for part in parts:
            for node in walk(part):
                if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and any(
                    mentions(element, {index}) for element in node.slice
                ):
                    if not self.is_array(node.value):
                        return True
        return False

    def range_count(self, iterable) -> cst.BaseExpression | None:
        """`n` of `range(n)` (one argument), unless a literal under 10: a short loop stays a loop (as JF101)."""
        if not (isinstance(iterable, cst.Call) and self.builtin(iterable.func, "range") and len(iterable.args) == 1):
            return None
        arg = iterable.args[0]
        if arg.keyword is not None or arg.star:
            return None
        if isinstance(arg.value, cst.Integer) and int(arg.value.evaluated_value) < _SHORT:
            return None
        return arg.value

    def creation(self, loop: cst.For, collector: str) -> cst.SimpleStatementLine | None:
        """The `ys = []` statement just before the loop."""
        parent = self.context.parents.get(loop)
        siblings = list(getattr(parent, "body", ()))
        position = next((i for i, st in enumerate(siblings) if st is loop), None)
        if not position:
            return None
        before = siblings[position - 1]
        if not (isinstance(before, cst.SimpleStatementLine) and len(before.body) == 1):
            return None
        small = before.body[0]
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
            return None
        if small.targets[0].target.value != collector or not (isinstance(small.value, cst.List) and not small.value.elements):
            return None
        return before

    def after(self, node: cst.CSTNode, loop: cst.For) -> bool:
        """Whether `node` is in a statement that follows the loop in the loop's own block."""
        parents = self.context.parents
        block = parents.get(loop)
        current = node
        while current is not None and parents.get(current) is not block:
            current = parents.get(current)
        siblings = list(getattr(block, "body", ()))
        return current is not None and current in siblings and siblings.index(current) > siblings.index(loop)

    def batch(self, value: cst.BaseExpression) -> Batch | None:
        """The comprehension or `list(map(...))` passed to the stacking call, when it has a shape we handle."""
        if isinstance(value, cst.Call) and self.builtin(value.func, "list") and len(value.args) == 1:
            inner = value.args[0].value
            if not (isinstance(inner, cst.Call) and self.builtin(inner.func, "map")) or len(inner.args) < 2:
                return None
            if any(a.keyword is not None or a.star for a in inner.args):
                return None
            return Batch(None, [], [a.value for a in inner.args[1:]], mapped=inner.args[0].value)
        if not isinstance(value, cst.ListComp):
            return None
        comp = value.for_in
        if comp.inner_for_in is not None or comp.ifs or comp.asynchronous is not None:
            return None
        return self.iteration(comp.target, comp.iter, value.elt)

    def index_range(self, iterable: cst.BaseExpression) -> cst.BaseExpression | None:
        """`xs` of `range(len(xs))` or `range(xs.shape[0])`."""
        if not (isinstance(iterable, cst.Call) and self.builtin(iterable.func, "range") and len(iterable.args) == 1):
            return None
        bound = iterable.args[0]
        if bound.keyword is not None or bound.star:
            return None
        value = bound.value
        if isinstance(value, cst.Call) and self.builtin(value.func, "len") and len(value.args) == 1:
            return value.args[0].value if isinstance(value.args[0].value, cst.Name) else None
        if (
            isinstance(value, cst.Subscript)
            and isinstance(value.value, cst.Attribute)
            and value.value.attr.value == "shape"
            and isinstance(value.value.value, cst.Name)
            and len(value.slice) == 1
            and isinstance(value.slice[0].slice, cst.Index)
            and isinstance(value.slice[0].slice.value, cst.Integer)
            and value.slice[0].slice.value.value == "0"
        ):
            return value.value.value
        return None

    @staticmethod
    def is_row(node: cst.CSTNode, index: str, array: cst.BaseExpression) -> bool:
        return (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and isinstance(array, cst.Name)
            and node.value.value == array.value
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Name)
            and node.slice[0].slice.value.value == index
        )

    # ---- what the batched function may do ------------------------------------------------------------------

    def check_function(self, func: cst.BaseExpression, batched: Sequence[int], arguments: int | None = None) -> bool:
        """Raises Refused unless `func` is a function jax.vmap batches as the loop computes it: a JAX library
        function, a lambda, or a pure same-module function with no Python control flow on its batched
        parameters. Returns whether it draws random numbers."""
        qualified = self.context.names.qualified(func)
        if qualified is not None:
            if qualified in VALUE_SHAPED:
                raise Refused(f"`{qualified}` returns an array whose shape depends on the values")
            if qualified.startswith(NUMERIC_NAMESPACES):
                probe = cst.Call(func, [cst.Arg(cst.Name("_batched_") if i in batched else cst.Name("_")) for i in range(arguments or 0)])
                if self.batched_shape(qualified, probe, {"_batched_"}):
                    raise Refused(f"`{qualified}` would take a batched value as a shape or a count")
                return qualified.startswith("jax.random.")
            raise Refused(f"it calls `{qualified}`, which is not known to be pure and to batch under jax.vmap")
        definition = None
        if isinstance(func, cst.Lambda):
            definition = func
        elif isinstance(func, cst.Name):
            found = self.dataflow().local_function(func)
            definition = found
        if definition is None:
            raise Refused(f"it calls `{self.context.code_for(func)}`, which is not known to be pure")
        params = definition.params
        if isinstance(params.star_arg, cst.Param) or isinstance(params.star_kwarg, cst.Param):
            raise Refused(f"`{self.context.code_for(func)}` takes *args or **kwargs")
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        if arguments is not None and arguments > len(positional):
            raise Refused(f"`{self.context.code_for(func)}` takes fewer arguments than it is given")
        tainted = {positional[i] for i in batched if i < len(positional)}
        body = [definition.body] if isinstance(definition, cst.Lambda) else list(body_statements(definition.body))
        blocker = self.batch_blocker(body, tainted, 0)
        if blocker is not None:
            raise Refused(f"`{self.context.code_for(func)}` {blocker}")
        arrays = frozenset(batched_names(body, tainted))  # rows of a JAX array and what is computed from them
        impurity = self.dataflow().function_impurity(definition, arrays=arrays)
        if impurity is not None:
            raise Refused(f"`{self.context.code_for(func)}` {impurity.reason}")
        return self.draws_random(body, 0)

    def check_single_result(self, func: cst.BaseExpression, batched: Sequence[int]) -> None:
        """The function must return one array: a tuple would stack into one array but vmap returns a tuple."""
        qualified = self.context.names.qualified(func)
        if qualified is not None:
            if not returns_one_array(qualified):
                raise Refused(f"`{qualified}` is not known to return one array (a tuple would stack differently)")
            return
        definition = func if isinstance(func, cst.Lambda) else self.dataflow().local_function(func)
        positional = [p.name.value for p in (*definition.params.posonly_params, *definition.params.params)]
        if isinstance(definition, cst.Lambda):
            values = [definition.body]
        else:
            values = [n.value for n in _walk_own(definition.body) if isinstance(n, cst.Return)]
        # The batched parameters are rows of JAX arrays; names computed from them are followed to their values.
        rows = {positional[i] for i in batched if i < len(positional)}
        if not values or not all(v is not None and self.element_is_array(v, rows) for v in values):
            raise Refused(
                f"`{self.context.code_for(func)}` is not proven to return one JAX array (a tuple would stack differently)"
            )

    def element_is_array(self, expr: cst.BaseExpression, rows: set[str]) -> bool:
        """Whether the element surely is one JAX array (not a tuple, which jnp.stack and jax.vmap treat
        differently): jaxfix.analysis.arrays.value_kinds, where `rows` hold arrays and a same-module function
        returning one counts."""
        at = self.context.shapes.symbolic.statement(expr) or expr
        kinds = self.context.arrays.value_kinds(expr, at, frozenset(rows), calls=self.returns_array)
        return kinds == {ARRAY_VALUE}

    def returns_array(self, value: cst.BaseExpression) -> bool:
        if self.dataflow().is_array_like(value):
            return True
        if isinstance(value, cst.Call):  # a same-module function returning an array
            definition = self.dataflow().local_function(value.func) if isinstance(value.func, cst.Name) else None
            if isinstance(definition, cst.FunctionDef):
                returns = [n.value for n in _walk_own(definition.body) if isinstance(n, cst.Return)]
                return bool(returns) and all(
                    r is not None and self.dataflow().is_array_like(r) for r in returns
                )
        return False

    def batch_blocker(self, statements: Sequence[cst.CSTNode], tainted: set[str], depth: int) -> str | None:
        """What in `statements` fails or computes otherwise once the `tainted` names are batched tracers:
        Python control flow or conversions on them, NumPy/math on them, value-dependent shapes; calls to
        same-module functions are followed."""
        tainted = batched_names(statements, tainted)
        code = self.context.code_for
        for statement in statements:
            for node in walk(statement):
                test = None
                if isinstance(node, (cst.If, cst.While, cst.IfExp, cst.Assert)):
                    test = node.test
                elif isinstance(node, cst.BooleanOperation):
                    test = node
                elif isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
                    test = node
                if isinstance(node, (cst.For, cst.CompFor)) and _batched(node.iter, tainted):
                    return f"runs a Python loop over a batched value (`{snippet(code(node.iter))}`)"
                if test is not None and _batched(test, tainted):
                    return f"uses a batched value in Python control flow (`{snippet(code(test))}`)"
                if isinstance(node, cst.Comparison) and _batched(node, tainted) and any(
                    isinstance(c.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for c in node.comparisons
                ):
                    return f"tests a batched value with `in`/`is` (`{snippet(code(node))}`)"
                if isinstance(node, cst.FormattedString) and _batched(node, tainted):
                    return "formats a batched value into a string"
                if isinstance(node, cst.Subscript):
                    for element in node.slice:
                        part = element.slice
                        if isinstance(part, cst.Slice) and any(
                            b is not None and _batched(b, tainted) for b in (part.lower, part.upper, part.step)
                        ):
                            return f"uses a batched value as a slice bound (`{snippet(code(node))}`)"
                        if isinstance(part, cst.Index) and _batched(part.value, tainted):
                            if isinstance(part.value, (cst.Comparison, cst.UnaryOperation)) or _has_comparison(part.value):
                                return f"indexes with a boolean mask, whose shape depends on the values (`{snippet(code(node))}`)"
                            known = self.dataflow().is_array_like(node.value) or self.is_array(node.value)
                            if not known and not _batched(node.value, tainted):
                                return f"indexes something not known to be a JAX array with a batched value (`{snippet(code(node))}`)"
                if isinstance(node, cst.Call):
                    reason = self.call_blocker(node, tainted, depth)
                    if reason is not None:
                        return reason
        return None

    def call_blocker(self, call: cst.Call, tainted: set[str], depth: int) -> str | None:
        code = self.context.code_for
        batched_args = [i for i, a in enumerate(call.args) if _batched(a.value, tainted)]
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _CONCRETE_METHODS and _batched(func.value, tainted):
            return f"turns a batched value into a Python value (`{snippet(code(call))}`)"
        if not batched_args:
            return None
        if isinstance(func, cst.Name) and self.context.names.is_builtin(func, func.value):
            if func.value in _CONCRETE_BUILTINS:
                return f"passes a batched value to `{func.value}()`"
            return None
        qualified = self.context.names.qualified(func)
        if qualified is not None:
            if qualified in VALUE_SHAPED and not any(a.keyword is not None and a.keyword.value == "size" for a in call.args):
                return f"calls `{code(func)}`, whose result shape depends on the values"
            if qualified == "jax.numpy.where" and len(call.args) == 1:
                return "calls `jnp.where` with one argument, whose result shape depends on the values"
            if self.batched_shape(qualified, call, tainted):
                return f"uses a batched value as a shape or a count (`{snippet(code(call))}`)"
            if qualified.startswith(NUMERIC_NAMESPACES):
                return None
            return f"passes a batched value to `{code(func)}`, which does not batch under jax.vmap"
        if isinstance(func, cst.Name):
            definition = self.dataflow().local_function(func)
            if definition is not None:
                if depth >= _MAX_DEPTH:
                    return f"calls `{func.value}` too deeply nested to check"
                if any(call.args[i].keyword is not None or call.args[i].star for i in batched_args):
                    return f"passes a batched value to `{func.value}` by keyword or unpacking"
                positional = [p.name.value for p in (*definition.params.posonly_params, *definition.params.params)]
                names = {positional[i] for i in batched_args if i < len(positional)}
                body = [definition.body] if isinstance(definition, cst.Lambda) else list(body_statements(definition.body))
                inner = self.batch_blocker(body, names, depth + 1)
                return None if inner is None else f"calls `{func.value}`, which {inner}"
        if isinstance(func, cst.Attribute) and func.attr.value in _SHAPE_METHODS:
            return f"uses a batched value as a shape or a count (`{snippet(code(call))}`)"
        if isinstance(func, cst.Attribute) and _batched(func.value, tainted):
            return None  # a method of a batched array (`x.sum()`): the concrete ones are caught above
        return f"passes a batched value to `{code(func)}`, which is not known to batch under jax.vmap"

    @staticmethod
    def batched_shape(qualified: str, call: cst.Call, tainted: set[str]) -> bool:
        """Whether `call` passes a batched value where the function takes a shape, a size or a count."""
        if qualified.startswith("jax.random."):
            name = qualified[len("jax.random."):]
            if name not in RANDOM_SHAPE_POSITION:
                return any(_batched(a.value, tainted) for a in call.args[1:])
            position = RANDOM_SHAPE_POSITION[name]
            if position is None:
                return False
            return any(
                _batched(a.value, tainted)
                and ((a.keyword is None and i >= position) or (a.keyword is not None and a.keyword.value in ("shape", "num")))
                for i, a in enumerate(call.args)
            )
        if qualified not in SHAPE_ARGUMENTS:
            return False
        positions, keywords = SHAPE_ARGUMENTS[qualified]
        return any(
            _batched(a.value, tainted)
            and ((a.keyword is None and (i in positions or a.star)) or (a.keyword is not None and a.keyword.value in keywords))
            for i, a in enumerate(call.args)
        )

    def expression_impurity(self, expr: cst.BaseExpression, arrays: frozenset[str] = frozenset()) -> str | None:
        dataflow = self.dataflow()
        for node in walk(expr):
            if isinstance(node, cst.Call):
                blocker: Blocker | None = dataflow.call_blocker(node, frozenset(), arrays)
                if blocker is not None:
                    return blocker.reason
        return None

    def draws_random(self, statements: Sequence[cst.CSTNode], depth: int) -> bool:
        for statement in statements:
            for node in walk(statement):
                if not isinstance(node, cst.Call):
                    continue
                qualified = self.context.names.qualified(node.func)
                if qualified is not None and qualified.startswith("jax.random."):
                    return True
                if isinstance(node.func, cst.Name) and depth < _MAX_DEPTH:
                    definition = self.dataflow().local_function(node.func)
                    if definition is not None:
                        body = [definition.body] if isinstance(definition, cst.Lambda) else list(body_statements(definition.body))
                        if self.draws_random(body, depth + 1):
                            return True
        return False

    # ---- small queries -------------------------------------------------------------------------------------

    def is_array(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` surely holds one JAX array: the dataflow's evidence, or a name bound once, to a JAX
        function's result (`keys = jax.random.split(key, n)`)."""
        if self.dataflow().is_array_like(expr):
            return True
        if not isinstance(expr, cst.Name):
            return False
        scope = self.context.wrapper.resolve(ScopeProvider).get(expr)
        assignments = list(scope[expr.value]) if scope is not None else []
        if len(assignments) != 1:
            return False
        node = getattr(assignments[0], "node", None)
        holder = self.context.parents.get(node) if isinstance(node, cst.Name) else None
        assign = self.context.parents.get(holder) if isinstance(holder, cst.AssignTarget) else None
        return isinstance(assign, cst.Assign) and len(assign.targets) == 1 and self.dataflow().is_array_like(assign.value)

    def builtin(self, func: cst.BaseExpression, name: str) -> bool:
        return isinstance(func, cst.Name) and func.value == name and self.context.names.is_builtin(func, name)

    def statement(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        current = node
        parents = self.context.parents
        while current is not None and not isinstance(current, cst.BaseStatement):
            current = parents.get(current)
        return current if isinstance(current, cst.SimpleStatementLine) else None

    def in_nested_scope(self, node: cst.CSTNode, statement: cst.CSTNode) -> bool:
        """Whether `node` sits in a lambda or comprehension inside `statement`: a function defined before the
        statement would not see the names that scope binds."""
        current = self.context.parents.get(node)
        while current is not None and current is not statement:
            if isinstance(current, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
                return True
            current = self.context.parents.get(current)
        return False

    def can_define_before(self, statement: cst.BaseStatement) -> bool:
        """A def can go before a statement of a function body or of the module (not a class body, where the
        function would become a method and its free names would not see the class's)."""
        parent = self.context.parents.get(statement)
        if isinstance(parent, cst.Module):
            return True
        owner = self.context.parents.get(parent)
        while owner is not None and not isinstance(owner, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            owner = self.context.parents.get(owner)
        return isinstance(owner, (cst.FunctionDef, cst.Module))

    def dataflow(self):
        return self.context.dataflow

    def single_stack(self, loop: cst.For, collector: str, creation: cst.SimpleStatementLine):
        """The one `jnp.stack(ys)` (or `jnp.array(ys)`) that reads the list: (the call, its name, its axis);
        None when the list is bound elsewhere or read otherwise (`ys[-1]`, `len(ys)`, returned as a list)."""
        scope = self.context.wrapper.resolve(ScopeProvider).get(creation.body[0].targets[0].target)
        if scope is None or isinstance(scope, cst.metadata.ClassScope):
            return None
        assignments = list(scope[collector])
        if len(assignments) != 1 or assignments[0].scope is not scope:
            return None
        # Every read of this binding, nested scopes included (a closure that returns the list would get an array).
        accesses = [a.node for a in assignments[0].references]
        if len(accesses) != 2:
            return None
        parents = self.context.parents
        found = None
        for name in accesses:
            holder = parents.get(name)
            if isinstance(holder, cst.Attribute) and holder.attr.value == "append":
                continue  # the append itself
            arg = holder
            call = parents.get(arg) if isinstance(arg, cst.Arg) else None
            if call is None or not isinstance(call, cst.Call) or arg is not call.args[0]:
                return None
            callee = self.context.names.callee(call)
            if callee not in STACKING:
                return None
            axis = stack_axis(call, callee)
            if axis is None or not self.after(call, loop):
                return None
            found = (call, STACKING[callee], axis)
        return found

    def buffer_creation(self, loop: cst.For, out: str) -> cst.SimpleStatementLine | None:
        """The `out = <call>` line before the loop in its block, with nothing in between mentioning `out`."""
        parent = self.context.parents.get(loop)
        siblings = list(getattr(parent, "body", ()))
        position = next((i for i, st in enumerate(siblings) if st is loop), None)
        if not position:
            return None
        for before in reversed(siblings[:position]):
            if not mentions(before, {out}):
                continue
            assign = single_name_assign(before)
            if assign is None or assign.targets[0].target.value != out or not isinstance(assign.value, cst.Call):
                return None
            return before
        return None


def single_name_assign(statement) -> cst.Assign | None:
    """`name = value` as the only statement of a line."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            return small
    return None


def mentions(node: cst.CSTNode, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in walk(node))


def _batched(node: cst.CSTNode, tainted: set[str]) -> bool:
    """Whether `node` reads a batched name otherwise than through a static attribute (`x.shape`, `x.ndim`)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Attribute) and current.attr.value in _STATIC_ATTRIBUTES:
            continue
        if isinstance(current, cst.Name) and current.value in tainted:
            return True
        stack.extend(children(current))
    return False


def batched_names(statements: Sequence[cst.CSTNode], tainted: set[str]) -> set[str]:
    """`tainted` and the names assigned from values computed from them (flow-insensitively): batched too."""
    tainted = set(tainted)
    for _ in range(10):
        grown = False
        for statement in statements:
            for node in walk(statement):
                if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and node.value is not None:
                    if _batched(node.value, tainted):
                        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                        for target in targets:
                            new = set(target_names(target)) - tainted
                            if new:
                                tainted |= new
                                grown = True
        if not grown:
            break
    return tainted


def _has_comparison(node: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Comparison) for n in walk(node))


def _walk_own(node: cst.CSTNode):
    """Every node under `node`, not entering nested functions, lambdas and classes (whose returns are theirs)."""
    stack = list(children(node))
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        stack.extend(children(current))


def snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def stack_axis(call: cst.Call, callee: str) -> int | None:
    """The stacking axis of `jnp.stack(ys, axis=k)` (0 without one, and for `jnp.array(ys)`); None when the
    call has other arguments (`dtype=`, a positional or computed axis), which this rule leaves alone."""
    axis = 0
    for arg in call.args[1:]:
        if callee != "jax.numpy.stack" or arg.keyword is None or arg.keyword.value != "axis":
            return None
        value = arg.value
        negative = isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
        literal = value.expression if negative else value
        if not isinstance(literal, cst.Integer):
            return None
        axis = -int(literal.evaluated_value) if negative else int(literal.evaluated_value)
    return axis


def append_of(statement) -> tuple[str, cst.BaseExpression] | None:
    """(`ys`, `e`) of a statement `ys.append(e)`."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return None
    small = statement.body[0]
    call = small.value if isinstance(small, cst.Expr) else None
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "append"):
        return None
    if not isinstance(call.func.value, cst.Name) or len(call.args) != 1:
        return None
    arg = call.args[0]
    if arg.keyword is not None or arg.star:
        return None
    return call.func.value.value, arg.value


def simple_assignment(statement) -> str | None:
    """Why a statement before the `.append` cannot move into a local function as is (None: it can): only
    `name = value` lines keep the same meaning there."""
    if isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, cst.Assign) and all(isinstance(t.target, (cst.Name, cst.Tuple)) for t in small.targets)
        for small in statement.body
    ):
        return None
    return "the body has statements other than assignments to names before the `.append`"


def index_only(batch) -> bool:
    """A batch that walks a count and no array's rows (`[f(i) for i in range(n)]`): worth a rewrite where the
    index can be traced, but where it cannot (Python branches or list indexing on it) it is host-side
    arithmetic, not a batch, and is left alone without a report."""
    return all(isinstance(array, Count) for array in batch.arrays)
