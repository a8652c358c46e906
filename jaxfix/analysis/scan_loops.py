"""What a Python `for` loop in traced code is as a `lax.scan` (JF102): what it walks (the indices of a `range` or
the rows of an array, forwards or backwards), the lists it collects one value into per step and stacks after it,
the rows a range loop reads at its index, what it carries and what it assumes; or why it cannot become a scan."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from jaxfix.analysis.arrays import ARRAY_VALUE as _ARRAY_VALUE, OTHER as _OTHER
from jaxfix.analysis.carry import Slot, number_start, snippet
from jaxfix.analysis.dataflow import LoopFlow, body_statements
from jaxfix.analysis.loops import range_trip, static_advice
from jaxfix.analysis.metadata import children
from jaxfix.analysis.shapes import Category
from jaxfix.analysis.traced import NOT_COMPILED, Kind
from jaxfix.facts.knowledge.jax import ARRAY_CONVERSIONS, LIKE

# Calls that turn the collected list into one array: stacked along a new leading axis, as lax.scan stacks.
_STACK = "jax.numpy.stack"


@dataclass(frozen=True)
class _Iteration:
    """What the loop walks: the indices of a `range` (mode "index") or the rows of an array (mode "rows")."""

    mode: str
    reverse: bool
    kind: str  # "literal" (count known), "static" (known at trace time, not here), "traced"
    count: int | None
    lower: cst.BaseExpression | None = None  # index mode: range(lower, upper), walked backwards if reverse
    upper: cst.BaseExpression | None = None
    array: cst.BaseExpression | None = None  # rows mode: the array iterated
    problem: str | None = None


@dataclass(frozen=True)
class _Output:
    """A list the loop appends one value to per step, stacked after the loop: one of scan's outputs."""

    name: str
    creation: cst.SimpleStatementLine  # `ys = []`, just before the loop
    append: cst.SimpleStatementLine  # `ys.append(value)`, a statement of the loop body
    value: cst.BaseExpression
    uses: tuple[cst.Call, ...]  # `jnp.stack(ys)`, ... after the loop
    reversal: cst.SimpleStatementLine | None = None  # `ys = ys[::-1]` or `ys.reverse()` just after the loop


@dataclass(frozen=True)
class Plan:
    loop: cst.For
    iteration: _Iteration
    carried: tuple[str, ...]
    outputs: tuple[_Output, ...]
    rows: tuple[tuple[str, tuple[cst.Subscript, ...]], ...]  # a range loop reading `xs[t]`: scan over xs
    index_used: bool  # index mode: the body reads the index (scan over jnp.arange), else `length=`
    # Carries that start as Python numbers and become arrays of an unproven shape: (name, starts at zero); the
    # scan starts them as arrays of the first step's shape and dtype.
    restart: tuple[tuple[str, bool], ...] = ()
    # Names assumed to be arrays, not proven: non-static arguments of the traced function, indexed by the
    # scan's traced index (anything else raises at trace time); and that function's name.
    assumed: tuple[str, ...] = ()
    assumed_in: str | None = None
    # Names assumed to be arrays as a library call's output by convention (a Flax module's `apply`), with the call.
    assumed_outputs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ScanFinding:
    """What JF102 says about a loop: a plan to rewrite it, or (plan None) why it cannot."""

    node: cst.CSTNode
    message: str
    plan: Plan | None


class ScanLoopAnalysis:
    """JF102's facts about the loops of one module, each computed once per loop and trip-count options: the finding
    (a plan to rewrite the loop as a scan, or a report), or why the loop has none."""

    def __init__(self, context) -> None:
        self.context = context
        self._known: dict[tuple[cst.CSTNode, tuple[int, int]], tuple[ScanFinding | None, str | None]] = {}

    def finding(self, loop: cst.For, trip_counts: tuple[int, int]) -> ScanFinding | None:
        """JF102's finding on `loop`, None when the loop is none of its business. `trip_counts`: the
        (min-trip-count, report-trip-count) options."""
        return self._analysed(loop, trip_counts)[0]

    def refusal(self, loop: cst.For, trip_counts: tuple[int, int]) -> str | None:
        """Why JF102 leaves `loop` without a finding, where it recognised something of its pattern (else None)."""
        return self._analysed(loop, trip_counts)[1]

    def _analysed(self, loop: cst.For, trip_counts: tuple[int, int]) -> tuple[ScanFinding | None, str | None]:
        if (loop, trip_counts) not in self._known:
            analysis = _ScanAnalysis(self.context, loop, *trip_counts)
            self._known[(loop, trip_counts)] = (analysis.run(), analysis.why)
        return self._known[(loop, trip_counts)]


class _ScanAnalysis:
    """Decides what JF102 does with one loop: nothing (None), a rewrite (a Plan), or a report."""

    def __init__(self, context, loop: cst.For, min_trip_count: int, report_trip_count: int) -> None:
        self.context = context
        self.loop = loop
        self.min_trip_count, self.report_trip_count = min_trip_count, report_trip_count
        self.traced = context.traced
        self.dataflow = context.dataflow
        self.parents = context.parents
        self.why: str | None = None  # why the loop gets no finding, where it is recognised (for `jaxfix explain`)
        self.restarted: set[str] = set()
        self.assumed: list[str] = []
        self.assumed_in: str | None = None
        self.recorded = None  # the evidence (RecordedArray, CalledArray) the walked rows are known by, short of proof
        self.assumed_outputs: list[tuple[str, str]] = []

    def run(self) -> ScanFinding | None:
        loop = self.loop
        if loop.asynchronous is not None:
            return None
        if not self.traced.in_traced_code(loop):
            return self._quiet("not in traced code")
        iteration = self._iteration()
        if iteration is None and self.why is not None:
            return None
        if iteration is None:
            return self._quiet(
                "it walks neither a range() of a known kind nor the rows of an array proven to be a JAX array"
            )
        if iteration.kind == "literal" and iteration.count < self.min_trip_count:
            return self._quiet(f"a loop of {iteration.count} known steps: below min-trip-count ({self.min_trip_count})")
        flow = self.dataflow.loop(loop)
        lists = self._appended_lists(flow)
        rows: tuple = ()
        index_used = False
        if iteration.mode == "index":
            found = self._index_rows(iteration, flow)
            rows = found or ()
            index_used = found is None and self._reads_target()
            if not lists and not rows and not iteration.reverse:
                # a forward range loop collecting nothing and using its index: JF101's
                return self._quiet("it collects nothing and reads no rows: left to JF101 (loop-to-fori-loop)")
        if not flow.carried:
            # nothing flows between steps: jax.vmap's job (or nothing to do)
            return self._quiet("nothing is carried from one step to the next")
        kinds = [self.context.carry.name_kind(loop, name) for name in flow.carried]
        if Kind.TRACED not in kinds and iteration.kind != "traced":
            return self._quiet("every carried value is known at trace time: a static computation")
        problem = self._problem(iteration)
        outcome = self._check(iteration, flow, lists, rows, index_used)
        if iteration.kind != "traced" and not self.traced.compiled(self.traced.enclosing_function(loop)):
            outcome = NOT_COMPILED
        if isinstance(outcome, str):
            long = iteration.kind == "traced" or (iteration.kind == "literal" and iteration.count >= self.report_trip_count)
            started = number_start(outcome)
            if started is not None:
                # The loop is a scan but for its start: say how to start it, whatever the trip count.
                outcome = self._number_start_advice(started, iteration)
                long = True
            if long:
                message = f"{problem}; not rewritten to lax.scan: {outcome}"
                if iteration.kind == "traced" and iteration.upper is not None and started is None:
                    message += f"; or {static_advice(self.context, iteration.upper, by_hand=False)}"
                return ScanFinding(loop.iter, message, None)
            return self._quiet(f"not rewritten to lax.scan: {outcome}; not reported: {self._unreported(iteration)}")
        restart = tuple((name, self._starts_at_zero(name)) for name in flow.carried if name in self.restarted)
        assumed = tuple(self.assumed)
        outputs_assumed = tuple(self.assumed_outputs)
        plan = Plan(
            loop, iteration, flow.carried, outcome, rows, index_used, restart, assumed, self.assumed_in, outputs_assumed
        )
        details = "carrying " + ", ".join(f"`{name}`" for name in flow.carried)
        if outcome:
            details += "; stacking " + ", ".join(f"`{output.name}`" for output in outcome)
        message = f"{problem}; lax.scan traces the body once ({details})"
        for name, _ in restart:
            message += (
                f"; `{name}` starts as a Python number and becomes an array whose shape jaxfix cannot prove, so the "
                "scan starts it as an array of the first step's shape and dtype (`jax.eval_shape` of the step)"
            )
        if assumed:
            listed = _listing([f"`{name}`" for name in assumed])
            verb = "is an array" if len(assumed) == 1 else "are arrays"
            message += (
                f"; assumes {listed} {verb}: non-static arguments of `{self.assumed_in}`, which JAX traces, indexed by "
                "the scan's traced index (a tuple, list or dict there raises at trace time)"
            )
        for name, call in outputs_assumed:
            message += (
                f"; assumes `{name}` is an array: the output of `{call}`, one array by the library's convention, "
                "indexed by the scan's traced index (a tuple, list or dict there raises at trace time)"
            )
        if self.recorded is not None:
            message += "; " + self.recorded.evidence()
        if iteration.mode == "rows":
            message += f"; keep the Python loop if `{self._code(iteration.array)}` has fewer than ~{self.min_trip_count} rows"
        elif iteration.kind == "static":
            message += f"; keep the Python loop if `{self._count_text(iteration)}` stays under ~{self.min_trip_count}"
        if index_used and isinstance(loop.target, cst.Name):
            message += (
                f"; unsafe: `{loop.target.value}` is a traced int32 in the body, not a Python int, and floats may "
                "round differently in the last bits"
            )
        else:
            message += "; unsafe: floats may round differently in the last bits"
        return ScanFinding(loop.iter, message, plan)

    def _quiet(self, reason: str) -> None:
        """No finding: `reason` is kept for `jaxfix explain` (JF102's `decline`)."""
        self.why = reason
        return None

    def _unreported(self, iteration: _Iteration) -> str:
        if iteration.kind == "literal":
            return f"{iteration.count} steps, below report-trip-count ({self.report_trip_count})"
        return "its length is known only at trace time (a few layers unroll by design)"

    def _code(self, node: cst.CSTNode) -> str:
        return self.context.code_for(node)

    def _number_start_advice(self, name: str, iteration: _Iteration) -> str:
        """Why a carry that starts as a Python number blocks the scan, and how to start it instead: as an
        array shaped like one row of an array the loop reads (`jnp.zeros_like(rewards[0])`)."""
        zeros_like = self.context.names.expression_for("jax.numpy.zeros_like")[0]
        example = None
        if iteration.mode == "rows":
            example = f"{self._code(zeros_like)}({self._code(iteration.array)}[0])"
        else:
            target = self.loop.target.value if isinstance(self.loop.target, cst.Name) else None
            for node in _preorder(self.loop.body):
                if (
                    isinstance(node, cst.Subscript)
                    and isinstance(node.value, cst.Name)
                    and len(node.slice) == 1
                    and any(isinstance(n, cst.Name) and n.value == target for n in _preorder(node.slice[0]))
                ):
                    example = f"{self._code(zeros_like)}({node.value.value}[0])"
                    break
        how = f"`{name} = {example}`" if example is not None else "an array of the shape and dtype it has in the loop"
        return (
            f"`{name}` starts as a Python number and jaxfix cannot prove the shape it has after one step "
            f"(lax.scan needs the carry's shape from the start); start it with {how} if that is its shape in "
            "the loop"
        )

    # ---- what the loop walks ---------------------------------------------------------------------------

    def _iteration(self) -> _Iteration | None:
        it = self.loop.iter
        names = self.context.names
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and names.is_builtin(it.func, it.func.value):
            plain = all(a.keyword is None and not a.star for a in it.args)
            if it.func.value == "range" and plain:
                stop = self._reversed_stop(it)
                if stop is not None:
                    return self._index(None, stop, reverse=True)
                return self._range(it, reverse=False)
            if it.func.value == "reversed" and plain and len(it.args) == 1:
                inner = it.args[0].value
                if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name):
                    if inner.func.value == "range" and names.is_builtin(inner.func, "range"):
                        return self._range(inner, reverse=True)
                    return None
                return self._rows(inner, reverse=True)
            return None  # zip, enumerate, ...: not the rows of one array
        if isinstance(it, cst.Subscript) and len(it.slice) == 1 and _is_reversing(it.slice[0].slice):
            return self._rows(it.value, reverse=True)
        return self._rows(it, reverse=False)

    def _range(self, call: cst.Call, *, reverse: bool) -> _Iteration | None:
        trip = range_trip(self.context, call)
        if trip is None:
            return None
        problem = None
        if trip.problem:
            problem = "lax.scan rewrites ranges with a step of 1, or reversed ones (`range(n - 1, -1, -1)`)"
        return _Iteration("index", reverse, trip.kind, trip.count, trip.lower, trip.upper, problem=problem)

    def _reversed_stop(self, call: cst.Call) -> cst.BaseExpression | None:
        """`n` for `range(n - 1, -1, -1)`, the backward walk over range(n)."""
        if len(call.args) != 3:
            return None
        start, stop, step = (a.value for a in call.args)
        constant = self.context.shapes.constant
        if constant(step) != -1 or constant(stop) != -1:
            return None
        if isinstance(start, cst.BinaryOperation) and isinstance(start.operator, cst.Subtract):
            if constant(start.right) == 1:
                return start.left
        if isinstance(start, cst.Integer):  # range(99, -1, -1)
            return cst.Integer(str(int(start.evaluated_value) + 1))
        return None

    def _index(self, lower, upper, *, reverse: bool) -> _Iteration | None:
        kind = self.traced.kind(upper)
        if kind is Kind.UNKNOWN:
            return None
        if kind is Kind.TRACED:
            return _Iteration("index", reverse, "traced", None, lower, upper)
        count = self.context.shapes.constant(upper)
        if count is not None:
            return _Iteration("index", reverse, "literal", max(count, 0), lower, upper)
        return _Iteration("index", reverse, "static", None, lower, upper)

    def _rows(self, array: cst.BaseExpression, *, reverse: bool) -> _Iteration | None:
        """A loop over the rows of a traced JAX array (not a list, tuple or NumPy array)."""
        if self.traced.kind(array) is not Kind.TRACED:
            return None
        if not self._surely_array(array, self.loop, frozenset()):
            recorded = self.context.arrays.argument_evidence(array)
            if recorded is not None:
                self.recorded = recorded
                return _Iteration("rows", reverse, "static", None, array=array)
            shown = self._code(array)
            self.why = (
                f"`{shown}` is traced but not proven to be a JAX array (a list or tuple of arrays unrolls by design); "
                f"if it is one, annotate it (`{shown}: jax.Array`) and JF102 rewrites the loop over its rows, or record a "
                "run that calls the function (`jaxfix record -- pytest`) and JF102 offers the rewrite on that evidence "
                "(as it does where every call in the project passes an array)"
                if isinstance(array, cst.Name)
                else f"`{shown}` is traced but not proven to be a JAX array (a list or tuple of arrays unrolls by design)"
            )
            return None
        return _Iteration("rows", reverse, "static", None, array=array)

    def _problem(self, iteration: _Iteration) -> str:
        if iteration.mode == "rows":
            return f"this Python loop over the rows of `{self._code(iteration.array)}` unrolls once per row under tracing"
        if iteration.kind == "traced":
            return "range() of a traced value fails under tracing"
        if iteration.kind == "literal":
            return f"this Python loop unrolls {iteration.count} times under tracing"
        return f"this Python loop unrolls `{self._count_text(iteration)}` times under tracing"

    def _count_text(self, iteration: _Iteration) -> str:
        upper = self._code(iteration.upper)
        return upper if iteration.lower is None else f"{upper} - {self._code(iteration.lower)}"

    # ---- the index of a range loop -------------------------------------------------------------------------

    def _target_uses(self) -> list[cst.Name]:
        """Every mention of the loop target's name in the body that is a variable (not `.t`, not `f(t=...)`)."""
        target = self.loop.target
        if not isinstance(target, cst.Name):
            return []
        found = []
        for node in _preorder(self.loop.body):
            if isinstance(node, cst.Name) and node.value == target.value:
                parent = self.parents.get(node)
                if isinstance(parent, cst.Attribute) and parent.attr is node:
                    continue
                if isinstance(parent, cst.Arg) and parent.keyword is node:
                    continue
                found.append(node)
        return found

    def _reads_target(self) -> bool:
        return bool(self._target_uses())

    def _index_rows(self, iteration: _Iteration, flow: LoopFlow):
        """For `for t in range(xs.shape[0])` (or `len(xs)`) whose index is used only as `a[t]`, with each `a` a
        JAX array of the same length as `xs` that the body does not change: the arrays and their `a[t]`.
        None when the index is used otherwise, or not at all."""
        if iteration.lower is not None and self.context.shapes.constant(iteration.lower) != 0:
            return None
        bound = self._length_of(iteration.upper)
        if bound is None:
            return None
        found: dict[str, list[cst.Subscript]] = {}
        for use in self._target_uses():
            index = self.parents.get(use)
            element = self.parents.get(index)
            subscript = self.parents.get(element)
            if not (
                isinstance(index, cst.Index)
                and index.value is use
                and index.star is None
                and isinstance(subscript, cst.Subscript)
                and len(subscript.slice) == 1
                and isinstance(subscript.value, cst.Name)
            ):
                return None
            if self._is_store(subscript):
                return None
            found.setdefault(subscript.value.value, []).append(subscript)
        if not found:
            return None
        for name, subscripts in found.items():
            if name in flow.modified or name in flow.mutated or name in flow.targets:
                return None
            if not self._same_length(name, bound):
                return None
            array = subscripts[0].value
            if self.traced.kind(array) is not Kind.TRACED or not self._surely_array(array, self.loop, frozenset()):
                return None
        return tuple((name, tuple(subscripts)) for name, subscripts in found.items())

    def _length_of(self, expr: cst.BaseExpression, depth: int = 0) -> str | None:
        """`xs` for `xs.shape[0]`, `len(xs)`, or a local name bound to one of them before the loop."""
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            base = expr.value
            index = expr.slice[0].slice.value
            if (
                isinstance(base, cst.Attribute)
                and base.attr.value == "shape"
                and isinstance(base.value, cst.Name)
                and self.context.shapes.constant(index) == 0
            ):
                return base.value.value
            return None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and len(expr.args) == 1:
            arg = expr.args[0]
            if (
                expr.func.value == "len"
                and self.context.names.is_builtin(expr.func, "len")
                and arg.keyword is None
                and not arg.star
                and isinstance(arg.value, cst.Name)
            ):
                return arg.value.value
            return None
        if isinstance(expr, cst.Name) and depth < 3:
            sources = self._function_flow().reaching(self.loop, expr.value)
            if len(sources) == 1:
                (source,) = sources
                if isinstance(source, cst.BaseExpression):
                    return self._length_of(source, depth + 1)
        return None

    def _same_length(self, name: str, bound: str) -> bool:
        """Whether the arrays `name` and `bound` have the same leading length: the same array, or one made
        `jnp.zeros_like` (ones, empty, full) the other just before the loop."""
        if name == bound:
            return True
        for one, other in ((name, bound), (bound, name)):
            sources = self._function_flow().reaching(self.loop, one)
            if len(sources) != 1:
                continue
            (source,) = sources
            if (
                isinstance(source, cst.Call)
                and self.context.names.callee(source) in LIKE
                and source.args
                and source.args[0].keyword is None
                and isinstance(source.args[0].value, cst.Name)
                and source.args[0].value.value == other
                and not any(a.keyword is not None and a.keyword.value == "shape" for a in source.args)
            ):
                return True
        return False

    def _is_store(self, node: cst.CSTNode) -> bool:
        child, parent = node, self.parents.get(node)
        while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            child, parent = parent, self.parents.get(parent)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)):
            return getattr(parent, "target", None) is child
        return isinstance(parent, cst.Del)

    # ---- the lists the loop collects into -------------------------------------------------------------------

    def _appended_lists(self, flow: LoopFlow) -> tuple[str, ...]:
        """Names of outside variables the body calls `.append` on (the body itself does not bind them)."""
        found: list[str] = []
        for node in _preorder(self.loop.body):
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "append"
                and isinstance(node.func.value, cst.Name)
            ):
                name = node.func.value.value
                if name not in flow.modified and name not in flow.targets and name not in found:
                    found.append(name)
        return tuple(found)

    def _function_flow(self):
        return self.dataflow.flow(self.dataflow.enclosing_function(self.loop))

    def _outputs(self, lists: tuple[str, ...]) -> tuple[_Output, ...] | str:
        outputs = []
        for name in lists:
            output = self._output(name, lists)
            if isinstance(output, str):
                return output
            outputs.append(output)
        return tuple(outputs)

    def _output(self, name: str, lists: tuple[str, ...]) -> _Output | str:
        loop = self.loop
        creation = self._creation(name, lists)
        if isinstance(creation, str):
            return creation
        line, target = creation
        reversal = self._reversal(name)
        reversal_names = set() if reversal is None else {n for n in _preorder(reversal) if isinstance(n, cst.Name)}
        positions = self.context.positions
        loop_span = positions[loop]
        appends: list[cst.Call] = []
        uses: list[cst.Call] = []
        function = self.dataflow.enclosing_function(loop)
        for node in _preorder(function):
            if not (isinstance(node, cst.Name) and node.value == name) or node is target or node in reversal_names:
                continue
            parent = self.parents.get(node)
            if isinstance(parent, cst.Attribute) and parent.attr is node:
                continue
            if isinstance(parent, cst.Arg) and parent.keyword is node:
                continue
            where = positions[node].start
            inside = (loop_span.start.line, loop_span.start.column) <= (where.line, where.column) <= (
                loop_span.end.line,
                loop_span.end.column,
            )
            call = self.parents.get(parent)
            if inside and isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "append":
                if isinstance(call, cst.Call) and call.func is parent:
                    appends.append(call)
                    continue
            after = (where.line, where.column) > (loop_span.end.line, loop_span.end.column)
            if after and self._stack_call(node) is not None:
                uses.append(self._stack_call(node))
                continue
            shown = snippet(self._code(self._context_of(node)))
            if inside:
                return f"the body uses `{name}` other than appending to it (`{shown}`)"
            if after:
                return f"`{name}` is used as a list after the loop (`{shown}`)"
            return f"`{name}` is used before the loop (`{shown}`)"
        if len(appends) != 1:
            return f"the body appends to `{name}` more than once per step"
        call = appends[0]
        expr = self.parents.get(call)
        statement = self.parents.get(expr)
        if not (isinstance(expr, cst.Expr) and isinstance(statement, cst.SimpleStatementLine)):
            return f"the body uses the result of `{name}.append(...)`"
        if self.parents.get(statement) is not loop.body:
            nested = self.parents.get(statement)
            while nested is not None and not isinstance(nested, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
                nested = self.parents.get(nested)
            if isinstance(nested, cst.If):
                return f"the body appends to `{name}` conditionally (inside an `if`), and a scan stacks one output per step"
            return f"the body appends to `{name}` inside a nested block"
        if len(statement.body) != 1:
            return f"`{name}.append(...)` shares its line with other statements"
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            return f"`{self._code(call)}` is not a plain append of one value"
        return _Output(name, line, statement, call.args[0].value, tuple(uses), reversal)

    def _reversal(self, name: str) -> cst.SimpleStatementLine | None:
        """The statement right after the loop, in its block, that reverses the list in place: `ys = ys[::-1]`,
        `ys = list(reversed(ys))` or `ys.reverse()`. Everything after the loop then sees the reversed list."""
        block = self.parents.get(self.loop)
        statements = list(body_statements(block)) if isinstance(block, cst.BaseSuite) else list(getattr(block, "body", ()))
        if self.loop not in statements:
            return None
        following = statements[statements.index(self.loop) + 1 : statements.index(self.loop) + 2]
        if not following or not isinstance(following[0], cst.SimpleStatementLine) or len(following[0].body) != 1:
            return None
        small = following[0].body[0]
        if isinstance(small, cst.Expr):
            call = small.value
            if (
                isinstance(call, cst.Call)
                and not call.args
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "reverse"
                and isinstance(call.func.value, cst.Name)
                and call.func.value.value == name
            ):
                return following[0]
            return None
        if (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
            and small.targets[0].target.value == name
            and self._reversed_list(small.value) == name
        ):
            return following[0]
        return None

    def _reversed_list(self, expr: cst.BaseExpression) -> str | None:
        """`ys` for `ys[::-1]` or `list(reversed(ys))`."""
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
            if len(expr.slice) == 1 and _is_reversing(expr.slice[0].slice):
                return expr.value.value
            return None
        names = self.context.names
        if (
            isinstance(expr, cst.Call)
            and isinstance(expr.func, cst.Name)
            and expr.func.value == "list"
            and names.is_builtin(expr.func, "list")
            and len(expr.args) == 1
            and expr.args[0].keyword is None
            and not expr.args[0].star
        ):
            inner = expr.args[0].value
            if (
                isinstance(inner, cst.Call)
                and isinstance(inner.func, cst.Name)
                and inner.func.value == "reversed"
                and names.is_builtin(inner.func, "reversed")
                and len(inner.args) == 1
                and inner.args[0].keyword is None
                and not inner.args[0].star
                and isinstance(inner.args[0].value, cst.Name)
            ):
                return inner.args[0].value.value
        return None

    def _creation(self, name: str, lists: tuple[str, ...]):
        """The line `name = []` before the loop in the same block, with only plain statements in between
        (so the list starts empty every time the loop runs), and the Name it binds; or why not."""
        block = self.parents.get(self.loop)
        statements = list(body_statements(block)) if isinstance(block, cst.BaseSuite) else list(getattr(block, "body", ()))
        if self.loop not in statements:
            return f"`{name}` is not created as an empty list just before the loop"
        for statement in reversed(statements[: statements.index(self.loop)]):
            if not isinstance(statement, cst.SimpleStatementLine):
                break
            if any(isinstance(s, (cst.Return, cst.Raise, cst.Break, cst.Continue)) for s in statement.body):
                break
            bound = _empty_lists(statement)
            if bound is None or name not in bound:
                continue
            others = [n for n in bound if n not in lists]
            if others:
                return f"`{name}` is created on one line with `{others[0]}`, which the loop does not collect into"
            return statement, bound[name]
        return f"`{name}` is not created as an empty list (`{name} = []`) just before the loop"

    def _stack_call(self, name: cst.Name) -> cst.Call | None:
        """The `jnp.stack(ys)` / `jnp.array(ys)` / `jnp.asarray(ys)` (or with `ys[::-1]`) that `name` is the
        first argument of."""
        node = name
        parent = self.parents.get(node)
        if isinstance(parent, cst.Subscript) and parent.value is node:
            if len(parent.slice) != 1 or not _is_reversing(parent.slice[0].slice):
                return None
            node, parent = parent, self.parents.get(parent)
        elif isinstance(parent, cst.Arg):  # list(reversed(ys))
            inner = self.parents.get(parent)
            outer = self.parents.get(self.parents.get(inner))
            if isinstance(outer, cst.Call) and self._reversed_list(outer) == name.value and outer.args[0].value is inner:
                node, parent = outer, self.parents.get(outer)
        call = self.parents.get(parent)
        if not (isinstance(parent, cst.Arg) and parent.value is node and isinstance(call, cst.Call)):
            return None
        if not call.args or call.args[0] is not parent or parent.keyword is not None or parent.star:
            return None
        callee = self.context.names.callee(call)
        if callee == _STACK or callee in ARRAY_CONVERSIONS:
            return call
        return None

    def _context_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The expression around a use of a list that shows how it is used (`ys[-1]`, `len(ys)`, `return ys`)."""
        current = node
        while True:
            parent = self.parents.get(current)
            if parent is None:
                return current
            if isinstance(parent, (cst.Arg, cst.Element, cst.Index, cst.SubscriptElement, cst.Attribute)):
                current = parent
                continue
            if isinstance(parent, (cst.Call, cst.Subscript, cst.BinaryOperation, cst.Comparison, cst.UnaryOperation)):
                return parent
            if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return parent if isinstance(parent, cst.BaseSmallStatement) else current
            current = parent

    # ---- every condition -----------------------------------------------------------------------------------

    def _check(self, iteration: _Iteration, flow: LoopFlow, lists, rows, index_used):
        """The outputs, or why the loop cannot become a scan."""
        loop = self.loop
        if iteration.problem:
            return iteration.problem
        if iteration.kind == "traced":
            return (
                "lax.scan needs a static number of steps; use lax.while_loop, or loop over a fixed length and mask "
                "the extra steps"
            )
        if not isinstance(loop.target, cst.Name):
            return "the loop target is not a single name"
        if loop.orelse is not None:
            return "the loop has an `else:` clause"
        impurity = self.dataflow.impurity(loop, flow, appendable=lists)
        if impurity is not None:
            return f"the body {impurity.reason}"
        target = loop.target.value
        if flow.targets_live_out:
            return f"the loop variable `{target}` is read after the loop"
        outputs = self._outputs(lists)
        if isinstance(outputs, str):
            return outputs
        if iteration.mode == "rows":
            shapes = self.context.shapes
            rank = shapes.rank(iteration.array)
            bound = {target: Slot(rank=None if not rank else rank - 1, category=shapes.category(iteration.array))}
        else:
            bound = {target: Slot(rank=0, category=Category.INT)}
        restarted: set[str] = set()
        reason = self.context.carry.blocker(loop, flow, construct="lax.scan", bound=bound, restartable=restarted)
        if reason is not None:
            return reason
        self.restarted = restarted
        row_names = frozenset([target] if iteration.mode == "rows" else [])
        for output in outputs:
            shown = snippet(self._code(output.value))
            if self.traced.kind(output.value) is not Kind.TRACED:
                return f"the body appends `{shown}` to `{output.name}`, which is not known to be traced"
            # jnp.stack takes arrays and numbers only; jnp.array would stack a tuple's elements as well.
            stacked_only = all(self.context.names.callee(use) == _STACK for use in output.uses)
            held = self._types(output.value, output.append, row_names, frozenset())
            if not stacked_only and _OTHER in held:
                return (
                    f"the body appends `{shown}` to `{output.name}`, which is not proven to be one array "
                    "(jnp.array stacks a tuple's elements, a scan would return them apart)"
                )
        if iteration.mode == "index" and index_used:
            concrete = self.dataflow.concrete_use(loop, [target], self._indexable)
            if concrete is not None:
                return f"the body {concrete.reason}"
        return outputs

    def _indexable(self, base: cst.BaseExpression) -> bool:
        """Whether indexing `base` with the scan's traced index is what the loop's Python int index did: `base`
        is known to be an array, or is a non-static argument of the traced function (recorded in
        `self.assumed`) or a name bound to a library call's output that is one array by convention (a Flax module's
        `apply`), where anything but an array raises at trace time instead of computing other values."""
        if self.dataflow.is_array_like(base):
            return True
        function = self.context.arrays.traced_argument(base)
        if function is None:
            call = self.context.arrays.library_output(base)
            if call is None:
                return False
            if (base.value, call) not in self.assumed_outputs:
                self.assumed_outputs.append((base.value, call))
            return True
        if base.value not in self.assumed:
            self.assumed.append(base.value)
        self.assumed_in = function
        return True

    def _starts_at_zero(self, name: str) -> bool:
        """Whether every binding of `name` that reaches the loop is the number zero (`gae = 0.0`)."""
        sources = self._function_flow().reaching(self.loop, name)
        return all(isinstance(s, (cst.Integer, cst.Float)) and float(s.evaluated_value) == 0.0 for s in sources)

    # ---- one array, not a pytree -----------------------------------------------------------------------------

    def _surely_array(self, expr: cst.BaseExpression, at: cst.CSTNode, rows: frozenset) -> bool:
        """Whether `expr`, evaluated at the statement `at`, is one JAX array (not a tuple, list or dict of
        arrays, not a Python number); `rows` are names known to hold arrays (the rows a loop walks)."""
        return self._types(expr, at, rows, frozenset()) == {_ARRAY_VALUE}

    def _types(self, expr: cst.BaseExpression, at: cst.CSTNode, rows: frozenset, seen: frozenset) -> frozenset:
        """What `expr` may hold at `at` (jaxfix.analysis.arrays: an array, a number, anything else)."""
        return self.context.arrays.value_kinds(expr, at, rows, seen)


def _listing(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _preorder(node: cst.CSTNode):
    """Every node under `node` in source order (syntax.walk's order is not)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def _is_reversing(element) -> bool:
    """`::-1`."""
    return (
        isinstance(element, cst.Slice)
        and element.lower is None
        and element.upper is None
        and isinstance(element.step, cst.UnaryOperation)
        and isinstance(element.step.operator, cst.Minus)
        and isinstance(element.step.expression, cst.Integer)
        and element.step.expression.value == "1"
    )


def _empty_lists(line: cst.SimpleStatementLine) -> dict[str, cst.Name] | None:
    """The names a line `a = []`, `a: list = []` or `a, b = [], []` binds to new empty lists."""
    if len(line.body) != 1:
        return None
    small = line.body[0]
    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and _is_empty_list(small.value):
        return {small.target.value: small.target}
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    target = small.targets[0].target
    if isinstance(target, cst.Name):
        return {target.value: target} if _is_empty_list(small.value) else None
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(small.value, (cst.Tuple, cst.List)):
        if len(target.elements) != len(small.value.elements):
            return None
        found = {}
        for t, v in zip(target.elements, small.value.elements):
            if not isinstance(t.value, cst.Name) or isinstance(v, cst.StarredElement) or not _is_empty_list(v.value):
                return None
            found[t.value.value] = t.value
        return found
    return None


def _is_empty_list(expr) -> bool:
    return isinstance(expr, cst.List) and not expr.elements
