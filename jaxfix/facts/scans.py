"""What a Python `for` loop in traced code is as a `lax.scan` (JF102), on `ast`: what it walks (the indices of a
`range` or the rows of an array, forwards or backwards), the lists it collects one value into per step and stacks
after it, the rows a range loop reads at its index, what it carries and what it assumes; or why it cannot become a
scan (`FileFacts.scans`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxfix.diagnostics import spelled_with_import
from jaxfix.facts.arrays import ARRAY_VALUE, OTHER
from jaxfix.facts.carry import Slot, number_start, snippet
from jaxfix.facts.knowledge.jax import ARRAY_CONVERSIONS, LIKE
from jaxfix.facts.loops import LoopFlow
from jaxfix.facts.purity import _preorder as preorder  # every node in source order: one copy
from jaxfix.facts.shapes import Category
from jaxfix.facts.spelling import in_order, value_of
from jaxfix.facts.traced import NOT_COMPILED, Kind
from jaxfix.facts.trips import range_trip, static_advice

# Calls that turn the collected list into one array: stacked along a new leading axis, as lax.scan stacks.
STACK = "jax.numpy.stack"
_COMPOUND = tuple(
    getattr(ast, name) for name in (
        "If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar", "FunctionDef", "AsyncFunctionDef",
        "ClassDef", "Match",
    ) if hasattr(ast, name)
)  # fmt: skip
_NESTING = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)  # LibCST's, for an append
_JUMPS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


class Stop(ast.Constant):
    """The `n` of `range(n - 1, -1, -1)` written `range(99, -1, -1)`: a number no node of the module spells."""


@dataclass(frozen=True)
class Iteration:
    """What the loop walks: the indices of a `range` (mode "index") or the rows of an array (mode "rows")."""

    mode: str
    reverse: bool
    kind: str  # "literal" (count known), "static" (known at trace time, not here), "traced"
    count: int | None
    lower: ast.expr | None = None  # index mode: range(lower, upper), walked backwards if reverse
    upper: ast.expr | None = None
    array: ast.expr | None = None  # rows mode: the array iterated
    problem: str | None = None


@dataclass(frozen=True)
class Output:
    """A list the loop appends one value to per step, stacked after the loop: one of scan's outputs."""

    name: str
    creation: ast.stmt  # `ys = []`, alone on its line just before the loop
    append: ast.Expr  # `ys.append(value)`, alone on its line in the loop body
    value: ast.expr
    uses: tuple[ast.Call, ...]  # `jnp.stack(ys)`, ... after the loop
    reversal: ast.stmt | None = None  # `ys = ys[::-1]` or `ys.reverse()` just after the loop


@dataclass(frozen=True)
class Plan:
    loop: ast.For
    iteration: Iteration
    carried: tuple[str, ...]
    outputs: tuple[Output, ...]
    rows: tuple[tuple[str, tuple[ast.Subscript, ...]], ...]  # a range loop reading `xs[t]`: scan over xs
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

    node: ast.AST
    message: str
    plan: Plan | None


class ScanFacts:
    """JF102's facts about the loops of one module, each computed once per loop and trip-count options: the finding
    (a plan to rewrite the loop as a scan, or a report), or why the loop has none."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self._known: dict[tuple[ast.AST, tuple[int, int]], tuple[ScanFinding | None, str | None]] = {}

    def finding(self, loop: ast.For, trip_counts: tuple[int, int]) -> ScanFinding | None:
        """JF102's finding on `loop`, None when the loop is none of its business. `trip_counts`: the
        (min-trip-count, report-trip-count) options."""
        return self._analysed(loop, trip_counts)[0]

    def refusal(self, loop: ast.For, trip_counts: tuple[int, int]) -> str | None:
        """Why JF102 leaves `loop` without a finding, where it recognised something of its pattern (else None)."""
        return self._analysed(loop, trip_counts)[1]

    def _analysed(self, loop: ast.For, trip_counts: tuple[int, int]) -> tuple[ScanFinding | None, str | None]:
        key = (loop, trip_counts)
        if key not in self._known:
            analysis = _ScanAnalysis(self.facts, loop, *trip_counts)
            self._known[key] = (analysis.run(), analysis.why)
        return self._known[key]


def code(facts, node: ast.AST) -> str:
    """A node's code as LibCST's `code_for` gives it (a synthetic `Stop`: its number)."""
    if isinstance(node, Stop):
        return str(node.value)
    return facts.purity.code(node)


class _ScanAnalysis:
    """Decides what JF102 does with one loop: nothing (None), a rewrite (a Plan), or a report."""

    def __init__(self, facts, loop: ast.For, min_trip_count: int, report_trip_count: int) -> None:
        self.facts = facts
        self.loop = loop
        self.min_trip_count, self.report_trip_count = min_trip_count, report_trip_count
        self.traced = facts.traced
        self.binder = facts.binder
        self.parents = facts.binder.parents
        self.why: str | None = None  # why the loop gets no finding, where it is recognised (for `jaxfix explain`)
        self.restarted: set[str] = set()
        self.assumed: list[str] = []
        self.assumed_in: str | None = None
        self.recorded = None  # the evidence (RecordedArray, CalledArray) the walked rows are known by, short of proof
        self.assumed_outputs: list[tuple[str, str]] = []

    def _code(self, node: ast.AST) -> str:
        return code(self.facts, node)

    def run(self) -> ScanFinding | None:  # noqa: C901 - one condition after another, each with its reason
        loop, facts = self.loop, self.facts
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
        flow = facts.loop(loop)
        lists = self._appended_lists(flow)
        rows: tuple = ()
        index_used = False
        if iteration.mode == "index":
            found = self._index_rows(iteration, flow)
            rows = found or ()
            index_used = found is None and bool(self._target_uses())
            if not lists and not rows and not iteration.reverse:
                # a forward range loop collecting nothing and using its index: JF101's
                return self._quiet("it collects nothing and reads no rows: left to JF101 (loop-to-fori-loop)")
        if not flow.carried:
            # nothing flows between steps: jax.vmap's job (or nothing to do)
            return self._quiet("nothing is carried from one step to the next")
        kinds = [facts.carry.name_kind(loop, name) for name in flow.carried]
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
                    message += f"; or {static_advice(facts, iteration.upper, by_hand=False)}"
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
        if index_used and type(loop.target) is ast.Name:
            message += (
                f"; unsafe: `{loop.target.id}` is a traced int32 in the body, not a Python int, and floats may "
                "round differently in the last bits"
            )
        else:
            message += "; unsafe: floats may round differently in the last bits"
        return ScanFinding(loop.iter, message, plan)

    def _quiet(self, reason: str) -> None:
        """No finding: `reason` is kept for `jaxfix explain` (JF102's `decline`)."""
        self.why = reason
        return None

    def _unreported(self, iteration: Iteration) -> str:
        if iteration.kind == "literal":
            return f"{iteration.count} steps, below report-trip-count ({self.report_trip_count})"
        return "its length is known only at trace time (a few layers unroll by design)"

    def _number_start_advice(self, name: str, iteration: Iteration) -> str:
        """Why a carry that starts as a Python number blocks the scan, and how to start it instead: as an
        array shaped like one row of an array the loop reads (`jnp.zeros_like(rewards[0])`)."""
        zeros_like = spelled_with_import(self.binder, "jax.numpy.zeros_like")[0]
        example = None
        if iteration.mode == "rows":
            example = f"{zeros_like}({self._code(iteration.array)}[0])"
        else:
            target = self.loop.target.id if type(self.loop.target) is ast.Name else None
            for statement in self.loop.body:
                for node in preorder(statement):
                    if (
                        type(node) is ast.Subscript
                        and type(node.value) is ast.Name
                        and type(node.slice) is not ast.Tuple
                        and any(type(n) is ast.Name and n.id == target for n in preorder(node.slice))
                    ):
                        example = f"{zeros_like}({node.value.id}[0])"
                        break
                if example is not None:
                    break
        how = f"`{name} = {example}`" if example is not None else "an array of the shape and dtype it has in the loop"
        return (
            f"`{name}` starts as a Python number and jaxfix cannot prove the shape it has after one step "
            f"(lax.scan needs the carry's shape from the start); start it with {how} if that is its shape in "
            "the loop"
        )

    # ---- what the loop walks ---------------------------------------------------------------------------

    def _iteration(self) -> Iteration | None:
        it = self.loop.iter
        binder = self.binder
        if type(it) is ast.Call and type(it.func) is ast.Name and binder.is_builtin(it.func, it.func.id):
            plain = not it.keywords and not any(type(a) is ast.Starred for a in it.args)
            if it.func.id == "range" and plain:
                stop = self._reversed_stop(it)
                if stop is not None:
                    return self._index(None, stop, reverse=True)
                return self._range(it, reverse=False)
            if it.func.id == "reversed" and plain and len(it.args) == 1:
                inner = it.args[0]
                if type(inner) is ast.Call and type(inner.func) is ast.Name:
                    if inner.func.id == "range" and binder.is_builtin(inner.func, "range"):
                        return self._range(inner, reverse=True)
                    return None
                return self._rows(inner, reverse=True)
            return None  # zip, enumerate, ...: not the rows of one array
        if type(it) is ast.Subscript and is_reversing(it.slice):
            return self._rows(it.value, reverse=True)
        return self._rows(it, reverse=False)

    def _range(self, call: ast.Call, *, reverse: bool) -> Iteration | None:
        trip = range_trip(self.facts, call)
        if trip is None:
            return None
        problem = None
        if trip.problem:
            problem = "lax.scan rewrites ranges with a step of 1, or reversed ones (`range(n - 1, -1, -1)`)"
        return Iteration("index", reverse, trip.kind, trip.count, trip.lower, trip.upper, problem=problem)

    def _reversed_stop(self, call: ast.Call) -> ast.expr | None:
        """`n` for `range(n - 1, -1, -1)`, the backward walk over range(n)."""
        if len(call.args) != 3:
            return None
        start, stop, step = call.args
        constant = self.facts.shapes.constant
        if constant(step) != -1 or constant(stop) != -1:
            return None
        if type(start) is ast.BinOp and type(start.op) is ast.Sub:
            if constant(start.right) == 1:
                return start.left
        if type(start) is ast.Constant and type(start.value) is int:  # range(99, -1, -1)
            return Stop(start.value + 1)
        return None

    def _index(self, lower, upper, *, reverse: bool) -> Iteration | None:
        if isinstance(upper, Stop):
            return Iteration("index", reverse, "literal", max(upper.value, 0), lower, upper)
        kind = self.traced.kind(upper)
        if kind is Kind.UNKNOWN:
            return None
        if kind is Kind.TRACED:
            return Iteration("index", reverse, "traced", None, lower, upper)
        count = self.facts.shapes.constant(upper)
        if count is not None:
            return Iteration("index", reverse, "literal", max(count, 0), lower, upper)
        return Iteration("index", reverse, "static", None, lower, upper)

    def _rows(self, array: ast.expr, *, reverse: bool) -> Iteration | None:
        """A loop over the rows of a traced JAX array (not a list, tuple or NumPy array)."""
        if self.traced.kind(array) is not Kind.TRACED:
            return None
        if not self._surely_array(array, self.loop):
            recorded = self.facts.arrays.argument_evidence(array)
            if recorded is not None:
                self.recorded = recorded
                return Iteration("rows", reverse, "static", None, array=array)
            shown = self._code(array)
            self.why = (
                f"`{shown}` is traced but not proven to be a JAX array (a list or tuple of arrays unrolls by design); "
                f"if it is one, annotate it (`{shown}: jax.Array`) and JF102 rewrites the loop over its rows, or record a "
                "run that calls the function (`jaxfix record -- pytest`) and JF102 offers the rewrite on that evidence "
                "(as it does where every call in the project passes an array)"
                if type(array) is ast.Name
                else f"`{shown}` is traced but not proven to be a JAX array (a list or tuple of arrays unrolls by design)"
            )
            return None
        return Iteration("rows", reverse, "static", None, array=array)

    def _problem(self, iteration: Iteration) -> str:
        if iteration.mode == "rows":
            return f"this Python loop over the rows of `{self._code(iteration.array)}` unrolls once per row under tracing"
        if iteration.kind == "traced":
            return "range() of a traced value fails under tracing"
        if iteration.kind == "literal":
            return f"this Python loop unrolls {iteration.count} times under tracing"
        return f"this Python loop unrolls `{self._count_text(iteration)}` times under tracing"

    def _count_text(self, iteration: Iteration) -> str:
        upper = self._code(iteration.upper)
        return upper if iteration.lower is None else f"{upper} - {self._code(iteration.lower)}"

    # ---- the index of a range loop -------------------------------------------------------------------------

    def _target_uses(self) -> list[ast.AST]:
        """Every mention of the loop target's name in the body that LibCST spells as a name: a variable (not `.t`,
        not `f(t=...)`), or a parameter, def, class, handler, import or declaration of that name."""
        target = self.loop.target
        if type(target) is not ast.Name:
            return []
        name = target.id
        found = []
        for statement in self.loop.body:
            for node in preorder(statement):
                if _spells(node, name):
                    found.append(node)
        return found

    def _index_rows(self, iteration: Iteration, flow: LoopFlow):
        """For `for t in range(xs.shape[0])` (or `len(xs)`) whose index is used only as `a[t]`, with each `a` a
        JAX array of the same length as `xs` that the body does not change: the arrays and their `a[t]`.
        None when the index is used otherwise, or not at all."""
        constant = self.facts.shapes.constant
        if iteration.lower is not None and constant(iteration.lower) != 0:
            return None
        bound = self._length_of(iteration.upper)
        if bound is None:
            return None
        found: dict[str, list[ast.Subscript]] = {}
        for use in self._target_uses():
            subscript = self.parents.get(use)
            if not (
                type(use) is ast.Name
                and type(subscript) is ast.Subscript
                and subscript.slice is use
                and type(subscript.value) is ast.Name
            ):
                return None
            if self._is_store(subscript):
                return None
            found.setdefault(subscript.value.id, []).append(subscript)
        if not found:
            return None
        for name, subscripts in found.items():
            if name in flow.modified or name in flow.mutated or name in flow.targets:
                return None
            if not self._same_length(name, bound):
                return None
            array = subscripts[0].value
            if self.traced.kind(array) is not Kind.TRACED or not self._surely_array(array, self.loop):
                return None
        return tuple((name, tuple(subscripts)) for name, subscripts in found.items())

    def _length_of(self, expr: ast.expr, depth: int = 0) -> str | None:
        """`xs` for `xs.shape[0]`, `len(xs)`, or a local name bound to one of them before the loop."""
        if isinstance(expr, Stop):
            return None
        kind = type(expr)
        if kind is ast.Subscript:
            base, index = expr.value, expr.slice
            if (
                type(index) not in (ast.Slice, ast.Tuple)
                and type(base) is ast.Attribute
                and base.attr == "shape"
                and type(base.value) is ast.Name
                and self.facts.shapes.constant(index) == 0
            ):
                return base.value.id
            return None
        if kind is ast.Call and type(expr.func) is ast.Name and len(expr.args) + len(expr.keywords) == 1:
            if (
                expr.func.id == "len"
                and self.binder.is_builtin(expr.func, "len")
                and len(expr.args) == 1
                and type(expr.args[0]) is ast.Name
            ):
                return expr.args[0].id
            return None
        if kind is ast.Name and depth < 3:
            sources = self._function_flow().reaching(self.loop, expr.id)
            if len(sources) == 1:
                (source,) = sources
                if isinstance(source, ast.expr):
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
            if type(source) is not ast.Call or self.binder.callee(source) not in LIKE:
                continue
            arguments = in_order(source)
            if not arguments:
                continue
            first = arguments[0]
            if type(first) is ast.keyword and first.arg is not None:
                continue
            value = value_of(first)
            if type(value) is ast.Name and value.id == other and not any(k.arg == "shape" for k in source.keywords):
                return True
        return False

    def _is_store(self, node: ast.AST) -> bool:
        child, parent = node, self.parents.get(node)
        while type(parent) in (ast.Tuple, ast.List, ast.Starred):
            child, parent = parent, self.parents.get(parent)
        kind = type(parent)
        if kind in (ast.Assign, ast.Delete):
            return any(t is child for t in parent.targets)
        if kind in (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor):
            return parent.target is child
        return False

    # ---- the lists the loop collects into -------------------------------------------------------------------

    def _appended_lists(self, flow: LoopFlow) -> tuple[str, ...]:
        """Names of outside variables the body calls `.append` on (the body itself does not bind them)."""
        found: list[str] = []
        for statement in self.loop.body:
            for node in preorder(statement):
                if (
                    type(node) is ast.Call
                    and type(node.func) is ast.Attribute
                    and node.func.attr == "append"
                    and type(node.func.value) is ast.Name
                ):
                    name = node.func.value.id
                    if name not in flow.modified and name not in flow.targets and name not in found:
                        found.append(name)
        return tuple(found)

    def _function_flow(self):
        facts = self.facts
        return facts.flow(facts.enclosing_function(self.loop))

    def _outputs(self, lists: tuple[str, ...]) -> tuple[Output, ...] | str:
        outputs = []
        for name in lists:
            output = self._output(name, lists)
            if isinstance(output, str):
                return output
            outputs.append(output)
        return tuple(outputs)

    def _output(self, name: str, lists: tuple[str, ...]) -> Output | str:  # noqa: C901
        loop = self.loop
        creation = self._creation(name, lists)
        if isinstance(creation, str):
            return creation
        line, target = creation
        reversal = self._reversal(name)
        reversal_names = set() if reversal is None else {id(n) for n in ast.walk(reversal) if type(n) is ast.Name}
        start, end = (loop.lineno, loop.col_offset), (loop.end_lineno, loop.end_col_offset)
        appends: list[ast.Call] = []
        uses: list[ast.Call] = []
        function = self.facts.enclosing_function(loop)
        for node in preorder(function):
            if type(node) is not ast.Name or node.id != name or node is target or id(node) in reversal_names:
                continue
            parent = self.parents.get(node)
            where = (node.lineno, node.col_offset)
            inside = start <= where <= end
            if inside and type(parent) is ast.Attribute and parent.value is node and parent.attr == "append":
                call = self.parents.get(parent)
                if type(call) is ast.Call and call.func is parent:
                    appends.append(call)
                    continue
            after = where > end
            if after:
                stacked = self._stack_call(node)
                if stacked is not None:
                    uses.append(stacked)
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
        statement = self.parents.get(call)
        if type(statement) is not ast.Expr or self._in_suite(statement):
            return f"the body uses the result of `{name}.append(...)`"
        if not any(s is statement for s in loop.body):
            nested = self.parents.get(statement)
            while nested is not None and not isinstance(nested, _NESTING):
                nested = self.parents.get(nested)
            if type(nested) is ast.If:
                return f"the body appends to `{name}` conditionally (inside an `if`), and a scan stacks one output per step"
            return f"the body appends to `{name}` inside a nested block"
        if len(self._line_of(statement, loop.body)) != 1:
            return f"`{name}.append(...)` shares its line with other statements"
        if len(call.args) + len(call.keywords) != 1 or call.keywords or type(call.args[0]) is ast.Starred:
            return f"`{self._code(call)}` is not a plain append of one value"
        return Output(name, line, statement, call.args[0], tuple(uses), reversal)

    def _line_of(self, statement: ast.stmt, block: list[ast.stmt]) -> list[ast.stmt]:
        """The statements of `block` on the line (LibCST's SimpleStatementLine) that `statement` is on."""
        for _, group in self.facts.lines.group(block):
            if any(s is statement for s in group):
                return group
        return [statement]

    def _block(self, statement: ast.stmt | None = None) -> list[ast.stmt] | None:
        """The block (a list of statements) that holds `statement` (the loop by default)."""
        statement = self.loop if statement is None else statement
        parent = self.parents.get(statement)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(s is statement for s in block):
                return block
        return None

    def _in_suite(self, statement: ast.stmt) -> bool:
        """Whether `statement` stands after a colon on its header's line (LibCST's SimpleStatementSuite)."""
        block = self._block(statement)
        return block is not None and self.facts.lines.group(block)[0][0] == "suite"

    def _groups_around(self) -> tuple[list, list] | None:
        """The lines (`Lines.group`) of the loop's block before it and after it."""
        block = self._block()
        if block is None:
            return None
        groups = self.facts.lines.group(block)
        for index, (_, group) in enumerate(groups):
            if group[0] is self.loop:
                return groups[:index], groups[index + 1 :]
        return None

    def _reversal(self, name: str) -> ast.stmt | None:
        """The statement right after the loop, in its block, that reverses the list in place: `ys = ys[::-1]`,
        `ys = list(reversed(ys))` or `ys.reverse()`. Everything after the loop then sees the reversed list."""
        around = self._groups_around()
        if around is None or not around[1]:
            return None
        kind, group = around[1][0]
        if kind != "line" or len(group) != 1:
            return None
        small = group[0]
        if type(small) is ast.Expr:
            call = small.value
            if (
                type(call) is ast.Call
                and not call.args
                and not call.keywords
                and type(call.func) is ast.Attribute
                and call.func.attr == "reverse"
                and type(call.func.value) is ast.Name
                and call.func.value.id == name
            ):
                return small
            return None
        if (
            type(small) is ast.Assign
            and len(small.targets) == 1
            and type(small.targets[0]) is ast.Name
            and small.targets[0].id == name
            and self._reversed_list(small.value) == name
        ):
            return small
        return None

    def _reversed_list(self, expr: ast.expr) -> str | None:
        """`ys` for `ys[::-1]` or `list(reversed(ys))`."""
        if type(expr) is ast.Subscript and type(expr.value) is ast.Name:
            return expr.value.id if is_reversing(expr.slice) else None
        binder = self.binder
        if (
            type(expr) is ast.Call
            and type(expr.func) is ast.Name
            and expr.func.id == "list"
            and binder.is_builtin(expr.func, "list")
            and len(expr.args) == 1
            and not expr.keywords
            and type(expr.args[0]) is not ast.Starred
        ):
            inner = expr.args[0]
            if (
                type(inner) is ast.Call
                and type(inner.func) is ast.Name
                and inner.func.id == "reversed"
                and binder.is_builtin(inner.func, "reversed")
                and len(inner.args) == 1
                and not inner.keywords
                and type(inner.args[0]) is ast.Name
            ):
                return inner.args[0].id
        return None

    def _creation(self, name: str, lists: tuple[str, ...]):
        """The line `name = []` before the loop in the same block, with only plain statements in between
        (so the list starts empty every time the loop runs), and the Name it binds; or why not."""
        around = self._groups_around()
        if around is None:
            return f"`{name}` is not created as an empty list just before the loop"
        for kind, group in reversed(around[0]):
            if kind != "line":
                break
            if any(isinstance(s, _JUMPS) for s in group):
                break
            bound = _empty_lists(group)
            if bound is None or name not in bound:
                continue
            others = [n for n in bound if n not in lists]
            if others:
                return f"`{name}` is created on one line with `{others[0]}`, which the loop does not collect into"
            return group[0], bound[name]
        return f"`{name}` is not created as an empty list (`{name} = []`) just before the loop"

    def _stack_call(self, name: ast.Name) -> ast.Call | None:
        """The `jnp.stack(ys)` / `jnp.array(ys)` / `jnp.asarray(ys)` (or with `ys[::-1]`) that `name` is the
        first argument of."""
        node = name
        parent = self.parents.get(node)
        if type(parent) is ast.Subscript and parent.value is node:
            if not is_reversing(parent.slice):
                return None
            node = parent
        elif type(parent) is ast.Call and any(a is node for a in parent.args):  # list(reversed(ys))
            outer = self.parents.get(parent)
            if type(outer) is ast.Call and self._reversed_list(outer) == name.id and outer.args[0] is parent:
                node = outer
        call = self.parents.get(node)
        if type(call) is not ast.Call or not any(a is node for a in call.args):
            return None
        if in_order(call)[0] is not node:
            return None
        callee = self.binder.callee(call)
        if callee == STACK or callee in ARRAY_CONVERSIONS:
            return call
        return None

    def _context_of(self, node: ast.AST) -> ast.AST:
        """The expression around a use of a list that shows how it is used (`ys[-1]`, `len(ys)`, `return ys`)."""
        current = node
        while True:
            parent = self.parents.get(current)
            if parent is None:
                return current
            if type(parent) in (ast.Call, ast.Subscript, ast.BinOp, ast.Compare, ast.UnaryOp):
                return parent
            if isinstance(parent, ast.stmt):
                if isinstance(parent, _COMPOUND):
                    # a `with` item or a def's defaults, which `ast` gives no place: the use itself
                    return current if hasattr(current, "lineno") else node
                return parent
            current = parent

    # ---- every condition -----------------------------------------------------------------------------------

    def _check(self, iteration: Iteration, flow: LoopFlow, lists, rows, index_used):
        """The outputs, or why the loop cannot become a scan."""
        loop, facts = self.loop, self.facts
        if iteration.problem:
            return iteration.problem
        if iteration.kind == "traced":
            return (
                "lax.scan needs a static number of steps; use lax.while_loop, or loop over a fixed length and mask "
                "the extra steps"
            )
        if type(loop.target) is not ast.Name:
            return "the loop target is not a single name"
        if loop.orelse:
            return "the loop has an `else:` clause"
        impurity = facts.purity.impurity(loop, flow.live_in, appendable=lists)
        if impurity is not None:
            return f"the body {impurity.reason}"
        target = loop.target.id
        if flow.targets_live_out:
            return f"the loop variable `{target}` is read after the loop"
        outputs = self._outputs(lists)
        if isinstance(outputs, str):
            return outputs
        if iteration.mode == "rows":
            shapes = facts.shapes
            rank = shapes.rank(iteration.array)
            bound = {target: Slot(rank=None if not rank else rank - 1, category=shapes.category(iteration.array))}
        else:
            bound = {target: Slot(rank=0, category=Category.INT)}
        restarted: set[str] = set()
        reason = facts.carry.blocker(loop, flow, construct="lax.scan", bound=bound, restartable=restarted)
        if reason is not None:
            return reason
        self.restarted = restarted
        row_names = frozenset([target] if iteration.mode == "rows" else [])
        for output in outputs:
            shown = snippet(self._code(output.value))
            if self.traced.kind(output.value) is not Kind.TRACED:
                return f"the body appends `{shown}` to `{output.name}`, which is not known to be traced"
            # jnp.stack takes arrays and numbers only; jnp.array would stack a tuple's elements as well.
            stacked_only = all(self.binder.callee(use) == STACK for use in output.uses)
            held = facts.arrays.value_kinds(output.value, output.append, row_names)
            if not stacked_only and OTHER in held:
                return (
                    f"the body appends `{shown}` to `{output.name}`, which is not proven to be one array "
                    "(jnp.array stacks a tuple's elements, a scan would return them apart)"
                )
        if iteration.mode == "index" and index_used:
            concrete = facts.purity.concrete_use(loop, [target], self._indexable)
            if concrete is not None:
                return f"the body {concrete.reason}"
        return outputs

    def _indexable(self, base: ast.expr) -> bool:
        """Whether indexing `base` with the scan's traced index is what the loop's Python int index did: `base`
        is known to be an array, or is a non-static argument of the traced function (recorded in
        `self.assumed`) or a name bound to a library call's output that is one array by convention (a Flax module's
        `apply`), where anything but an array raises at trace time instead of computing other values."""
        facts = self.facts
        if facts.purity.is_array_like(base):
            return True
        function = facts.arrays.traced_argument(base)
        if function is None:
            call = facts.arrays.library_output(base)
            if call is None:
                return False
            if (base.id, call) not in self.assumed_outputs:
                self.assumed_outputs.append((base.id, call))
            return True
        if base.id not in self.assumed:
            self.assumed.append(base.id)
        self.assumed_in = function
        return True

    def _starts_at_zero(self, name: str) -> bool:
        """Whether every binding of `name` that reaches the loop is the number zero (`gae = 0.0`)."""
        sources = self._function_flow().reaching(self.loop, name)
        return all(
            type(s) is ast.Constant and type(s.value) in (int, float) and float(s.value) == 0.0 for s in sources
        )

    def _surely_array(self, expr: ast.expr, at: ast.stmt) -> bool:
        """Whether `expr`, evaluated at the statement `at`, is one JAX array (not a tuple, list or dict of
        arrays, not a Python number)."""
        return self.facts.arrays.value_kinds(expr, at) == {ARRAY_VALUE}


def _spells(node: ast.AST, name: str) -> bool:
    """Whether `node` holds `name` where LibCST has a Name for it (a variable, a parameter, a def's or class's
    name, an `except ... as` name, a `global`/`nonlocal` name, an import's name or alias)."""
    kind = type(node)
    if kind is ast.Name:
        return node.id == name
    if kind is ast.arg:
        return node.arg == name
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler):
        return node.name == name
    if kind in (ast.Global, ast.Nonlocal):
        return name in node.names
    if kind is ast.alias:
        return node.name.split(".")[0] == name or node.asname == name
    return False


def _listing(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def is_reversing(element: ast.AST) -> bool:
    """`::-1`."""
    return (
        type(element) is ast.Slice
        and element.lower is None
        and element.upper is None
        and type(element.step) is ast.UnaryOp
        and type(element.step.op) is ast.USub
        and type(element.step.operand) is ast.Constant
        and type(element.step.operand.value) is int
        and element.step.operand.value == 1
    )


def _empty_lists(line: list[ast.stmt]) -> dict[str, ast.Name] | None:
    """The names a line `a = []`, `a: list = []` or `a, b = [], []` binds to new empty lists."""
    if len(line) != 1:
        return None
    small = line[0]
    if type(small) is ast.AnnAssign and type(small.target) is ast.Name and _is_empty_list(small.value):
        return {small.target.id: small.target}
    if type(small) is not ast.Assign or len(small.targets) != 1:
        return None
    target = small.targets[0]
    if type(target) is ast.Name:
        return {target.id: target} if _is_empty_list(small.value) else None
    if type(target) in (ast.Tuple, ast.List) and type(small.value) in (ast.Tuple, ast.List):
        if len(target.elts) != len(small.value.elts):
            return None
        found = {}
        for t, v in zip(target.elts, small.value.elts):
            named = t.value if type(t) is ast.Starred else t
            if type(named) is not ast.Name or type(v) is ast.Starred or not _is_empty_list(v):
                return None
            found[named.id] = named
        return found
    return None


def _is_empty_list(expr) -> bool:
    return type(expr) is ast.List and not expr.elts
