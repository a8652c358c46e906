"""JF101 loop-to-fori-loop: a Python `for i in range(...)` loop in traced code that carries state becomes
`lax.fori_loop`."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst
from libcst.metadata import GlobalScope, ScopeProvider

from jaxfix.analysis.dataflow import (
    UNDEFINED,
    Blocker,
    Dataflow,
    LoopFlow,
    Parameter,
    body_statements,
)
from jaxfix.analysis.screen import Screen
from jaxfix.analysis.syntax import target_names
from jaxfix.analysis.traced import Kind
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

# Calls whose result has a shape other than their array argument's: a carried value passed through them grows
# or shrinks from one iteration to the next, which lax.fori_loop rejects.
_RESHAPING = frozenset(
    "jax.numpy." + name
    for name in """
    concatenate stack hstack vstack dstack column_stack append insert delete pad repeat tile expand_dims
    atleast_1d atleast_2d atleast_3d broadcast_to kron outer reshape ravel squeeze diff convolve correlate
    """.split()
)
_RESHAPING_METHODS = frozenset({"reshape", "ravel", "flatten", "squeeze", "repeat", "T", "transpose", "swapaxes"})
# Reductions that return a 0-d array when called without an axis.
_REDUCTIONS = frozenset(
    "jax.numpy." + name
    for name in """
    sum mean max min prod std var all any argmax argmin amax amin nansum nanmean nanmax nanmin median ptp average
    count_nonzero vdot linalg.norm linalg.det trace logaddexp.reduce
    """.split()
) | frozenset({"jax.nn.logsumexp", "jax.scipy.special.logsumexp"})
_REDUCTION_METHODS = frozenset("sum mean max min prod std var all any argmax argmin ptp".split())
# Elementwise functions: the result has the broadcast rank of the arguments.
_ELEMENTWISE = frozenset(
    "jax.numpy." + name
    for name in """
    sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh exp exp2 expm1 log log1p log2 log10 sqrt cbrt abs
    absolute add subtract multiply divide true_divide floor_divide power mod remainder maximum minimum where square
    sign floor ceil round rint trunc clip logaddexp hypot negative reciprocal float16 float32 float64 bfloat16
    int8 int16 int32 int64 uint8 uint32 complex64 complex128 asarray array logical_and logical_or logical_not
    equal not_equal less less_equal greater greater_equal isnan isfinite nan_to_num
    """.split()
) | frozenset(
    "jax.nn." + name for name in "relu sigmoid softplus silu swish gelu elu leaky_relu tanh log_sigmoid".split()
) | frozenset(
    "jax.lax." + name for name in "add sub mul div max min pow exp log sin cos tanh abs neg stop_gradient".split()
)
_LIKE = frozenset("jax.numpy." + name for name in "zeros_like ones_like full_like empty_like".split())
_FILLED = frozenset("jax.numpy." + name for name in "zeros ones full empty".split())
_JAXTYPING = frozenset({"Float", "Int", "Shaped", "Bool", "Real", "Inexact", "Num", "Integer", "Complex", "UInt"})


@dataclass(frozen=True)
class _Trip:
    """The trip count of `range(...)`: "literal" (a known number), "static" (known at trace time, not here),
    or "traced" (the Python loop cannot run under tracing)."""

    kind: str
    count: int | None
    lower: cst.BaseExpression | None  # None: 0
    upper: cst.BaseExpression
    problem: str | None = None  # what fori_loop cannot express (a step other than 1)


class LoopToForiLoop(Codemod):
    """
    ## What it does
    Finds `for i in range(...)` loops inside traced code (a function under `jax.jit`, `jax.vmap`, `jax.grad`,
    a `lax.scan` body, ...) that carry state from one step to the next and collect nothing, and rewrites them
    into `lax.fori_loop` with a named local body function.

    ## Why is this bad?
    JAX traces a Python loop by running it: a loop of N steps puts N copies of its body into the compiled
    program, so compile time grows with N (on CPU with JAX 0.10, a 300-step loop compiled 8x slower than
    `lax.fori_loop`, 1000 steps 34x, 5000 steps 59x). `lax.fori_loop` traces the body once. A loop whose
    trip count is itself traced (`range(n)` with `n` a traced argument) cannot run under `jax.jit` at all
    (`TracerIntegerConversionError`); `lax.fori_loop` accepts a traced trip count.

    ## Example
    ```python
    @jax.jit
    def power_iteration(a):
        v = jnp.ones(a.shape[0])
        for i in range(100):  # one multiply per step
            v = a @ v
            v = v / jnp.linalg.norm(v)
        return v
    ```

    ## Use instead
    ```python
    @jax.jit
    def power_iteration(a):
        v = jnp.ones(a.shape[0])
        def body(i, v):  # one multiply per step
            v = a @ v
            return v / jnp.linalg.norm(v)
        v = jax.lax.fori_loop(0, 100, body, v)
        return v
    ```
    The carried variables (assigned in the body and read in a later step or after the loop) keep their names:
    one is passed as is, several as a tuple unpacked at the top of the body (`total, v = carry`). An existing
    `lax` import is reused.

    ## Fix safety
    Unsafe. The rewrite computes the same values in every case jaxfix checks for, but some differences remain:
    - Inside the body the index is a traced (weakly typed) int32 instead of a Python int. Index arithmetic
      then wraps at 2**31 where Python integers do not, and `i / n` is computed in float32 instead of float64.
    - A carried Python number (`total = 0.0`) becomes a weakly typed array that JAX promotes to the loop's
      dtype, exactly as the Python loop's first step would; after the loop the value is an array, not a
      Python float, and its weak type may differ from the Python loop's.
    - Out-of-bounds indexing with the index clamps instead of raising an `IndexError` at trace time.
    - Reverse-mode differentiation works only when both bounds are static (`fori_loop` then lowers to
      `scan`); with a traced trip count it lowers to `while_loop`, which `jax.grad` rejects. The original could
      not run with a traced trip count at all.
    - XLA compiles one loop instead of an unrolled sequence, so fusion and float rounding may differ in the
      last bits.
    - A carried array whose shape or dtype changes between steps in a way jaxfix cannot see (say
      `h = w @ h` with a non-square `w`, or `x = x * 0.5` on an integer `x`) makes `fori_loop` raise at trace
      time ("carry input and carry output must have equal types") instead of computing.
    No case is proven safe: even a loop with static bounds, array carries and an unused index leaves XLA free
    to simplify the unrolled sequence differently from the loop. Run `jaxfix apply --unsafe-fixes`, or check
    the rewrite with `--verify`.

    ## When it stays quiet
    - Loops outside traced code, and loops over anything but `range(...)`: lists, tuples and pytrees (the
      layers of a model), NumPy data, `zip`/`enumerate`.
    - Loops with a known trip count below 10 (the Python loop compiles faster there) or whose carried values
      are all static (a loop that computes a configuration at trace time).
    - Loops that collect per-step results with `.append` (that is `lax.scan`'s job).
    - Loops it cannot rewrite whose trip count is static but below 100 or unknown here (`range(n)` with a
      static `n`): a dozen layers indexed from a list unroll by design.
    A loop whose trip count is static but not known here (`range(x.shape[0])`, a static argument) is
    rewritten, and the message says to keep the Python loop if the count stays under ~10.

    It reports without a fix, saying what stopped it, when a loop of at least 100 known steps (or a traced
    number of steps) has a body with `break`/`continue`/`return`/`raise`/`yield`/`global`/`nonlocal`/`del`,
    a `with` or `try` block, I/O (`print`, `jax.debug.print`), calls to functions not known to be pure, stores
    into outside objects, or a step other than 1; a carried variable that is not defined before the loop or
    starts as a static value or `None`; a carried value whose shape changes (`x = jnp.concatenate([x, y])`);
    a Python number that cannot be proven to stay a scalar in the loop; an index used as a Python int (a slice
    bound, `if i == 0:`, an index into a list, `range(i)`, `2 ** i`); or an index read after the loop.
    """

    code = "JF101"
    name = "loop-to-fori-loop"
    summary = "for-loop over range() in traced code carrying state: use lax.fori_loop"
    fix_safety = Safety.UNSAFE
    screen = ("range",)
    threshold: ClassVar[int] = 10  # trip counts below this stay Python loops (issue 3's measured crossover)
    # A loop that cannot be rewritten is reported only when unrolling it clearly costs: a model's dozen layers
    # indexed from a list is not worth a warning, a thousand-step loop with a `break` is.
    report_threshold: ClassVar[int] = 100

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs a `for ... in range(...)` loop (not a short literal one) in a function that
        TracedAnalysis may find traced."""
        in_traced_code = getattr(screen, "in_traced_code", None)
        if in_traced_code is not None:
            loops = in_traced_code(ast.For)
        else:  # a Screen without that query: every loop inside a function
            functions = [f for f in ast.walk(screen.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
            loops = (n for f in functions for n in ast.walk(f) if isinstance(n, ast.For))
        return any(
            isinstance(loop.iter, ast.Call)
            and isinstance(loop.iter.func, ast.Name)
            and loop.iter.func.id == "range"
            and not cls._short(loop.iter)
            for loop in loops
        )

    @classmethod
    def _short(cls, call: ast.Call) -> bool:
        """`range(3)`, `range(2, 5)`: integer literals only, fewer steps than the threshold (no name resolved)."""
        values = []
        for arg in call.args[:2]:
            if not (isinstance(arg, ast.Constant) and type(arg.value) is int):
                return False
            values.append(arg.value)
        if len(call.args) not in (1, 2) or call.keywords:
            return False
        start, stop = (0, values[0]) if len(values) == 1 else values
        return stop - start < cls.threshold

    VALID = (
        # outside traced code
        Valid(
            "import jax.numpy as jnp\n\ndef f(x):\n    total = 0.0\n    for i in range(100):\n"
            "        total = total + jnp.sum(x[i])\n    return total\n"
        ),
        # a short loop: unrolling 3 steps is cheaper than a loop
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    for i in range(3):\n"
            "        x = jnp.sin(x)\n    return x\n"
        ),
        # layers of a model: a loop over a Python list
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(params, x):\n    for w, b in params:\n"
            "        x = jnp.tanh(x @ w + b)\n    return x\n"
        ),
        # a static computation at trace time
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    width = 1\n    for i in range(20):\n"
            "        width = width * 2\n    return jnp.zeros(width) + x\n"
        ),
        # collects per-step outputs: lax.scan's job
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    h = x\n    outs = []\n"
            "    for i in range(100):\n        h = jnp.tanh(h)\n        outs.append(h)\n    return jnp.stack(outs)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    for i in range(100):\n"
            "        x = jnp.sin(x)\n    return x\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    def body(i, x):\n"
            "        return jnp.sin(x)\n    x = jax.lax.fori_loop(0, 100, body, x)\n    return x\n",
            message="lax.fori_loop",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n@jax.jit\ndef f(x):\n"
            "    total = 0.0\n    for _ in range(1, 50):\n        total = total + jnp.sum(x)  # grows\n"
            "        x = x * 0.5\n    return total\n",
            "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n@jax.jit\ndef f(x):\n"
            "    total = 0.0\n    def body(_, carry):\n        total, x = carry\n"
            "        total = total + jnp.sum(x)  # grows\n"
            "        x = x * 0.5\n        return total, x\n    total, x = lax.fori_loop(1, 50, body, (total, x))\n"
            "    return total\n",
        ),
        Invalid(
            "import jax.numpy as jnp\nfrom jax import jit\n\n@jit\ndef f(x, n):\n    for i in range(n):\n"
            "        x = jnp.cos(x)\n    return x\n",
            "import jax.numpy as jnp\nfrom jax import jit\nimport jax\n\n@jit\ndef f(x, n):\n    def body(i, x):\n"
            "        return jnp.cos(x)\n    x = jax.lax.fori_loop(0, n, body, x)\n    return x\n",
            message="traced",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    for i in range(100):\n"
            "        x = jnp.sin(x)\n        if jnp.all(x > 0):\n            break\n    return x\n",
            None,
            message="`break`",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    for i in range(100):\n"
            "        x = x.at[i:i + 2].add(1.0)\n    return x\n",
            None,
            message="slice",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    for i in range(100):\n"
            "        x = jnp.concatenate([x, x[-1:]])\n    return x\n",
            None,
            message="shape",
        ),
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._taken: set[str] = set()
        self._module_names: set[str] | None = None
        self._dataflow: Dataflow | None = None

    def _flows(self) -> Dataflow:
        # A method, not a property: LibCST's batched visitor inspects every attribute of a visitor.
        if self._dataflow is None:
            self._dataflow = self.context.dataflow
        return self._dataflow

    # ---- matching ------------------------------------------------------------------------------------------

    def visit_For(self, node: cst.For) -> None:
        if node.asynchronous is not None or not isinstance(node.iter, cst.Call):
            return
        func = node.iter.func
        if not (isinstance(func, cst.Name) and func.value == "range"):
            return
        args = node.iter.args
        literal = all(isinstance(a.value, cst.Integer) and a.keyword is None and not a.star for a in args)
        if len(args) in (1, 2) and literal:
            values = [int(a.value.evaluated_value) for a in args]
            start, stop = (0, values[0]) if len(values) == 1 else values
            if stop - start < self.threshold:
                return  # a short loop, decided before any name is resolved
        if not self.context.names.is_builtin(func, "range"):
            return
        traced = self.context.traced
        if not traced.in_traced_code(node):
            return
        trip = self._trip(node.iter)
        if trip is None:
            return
        if trip.kind == "literal" and trip.count < self.threshold:
            return
        flow = self._flows().loop(node)
        impurity = self._flows().impurity(node, flow)
        if impurity is not None and impurity.collects:
            return  # per-step outputs: a scan, not a fori_loop
        if not flow.carried:
            return
        kinds = {name: self._name_kind(node, name) for name in flow.carried}
        if Kind.TRACED not in kinds.values() and trip.kind != "traced":
            return  # nothing traced is carried: a static computation at trace time
        reason = self._blocker(node, trip, flow, impurity, kinds)
        if reason is not None:
            if trip.kind == "traced" or (trip.kind == "literal" and trip.count >= self.report_threshold):
                self.report(node.iter, f"{self._problem(trip)}; not rewritten to lax.fori_loop: {reason}")
            return
        fix = self._fix(node, trip, flow)
        carried = ", ".join(f"`{name}`" for name in flow.carried)
        if trip.kind == "traced":
            message = (
                f"{self._problem(trip)}; lax.fori_loop runs a traced number of steps (carrying {carried}; "
                "reverse-mode gradients then need static bounds)"
            )
        elif trip.kind == "literal":
            message = f"{self._problem(trip)}; lax.fori_loop traces the body once (carrying {carried})"
        else:
            count = self._count_text(trip)
            message = (
                f"{self._problem(trip)}; lax.fori_loop traces the body once (carrying {carried}); "
                f"keep the Python loop if `{count}` stays under ~{self.threshold}"
            )
        self.report(node.iter, message, fix)

    def _count_text(self, trip: _Trip) -> str:
        upper = self.context.code_for(trip.upper)
        return upper if trip.lower is None else f"{upper} - {self.context.code_for(trip.lower)}"

    def _problem(self, trip: _Trip) -> str:
        if trip.kind == "traced":
            return "range() of a traced value fails under tracing"
        if trip.kind == "literal":
            return f"this Python loop unrolls {trip.count} times under tracing"
        return f"this Python loop unrolls `{self._count_text(trip)}` times under tracing"

    def _trip(self, call: cst.Call) -> _Trip | None:
        if any(arg.keyword is not None or arg.star for arg in call.args) or not 1 <= len(call.args) <= 3:
            return None
        values = [arg.value for arg in call.args]
        problem = None
        step = 1
        if len(values) == 3:
            step = self._constant(values[2])
            if step != 1:
                problem = "lax.fori_loop supports only a step of 1"
            values = values[:2]
        kinds = [self.context.traced.kind(v) for v in values]
        if Kind.TRACED in kinds:
            kind = "traced"
        elif Kind.UNKNOWN in kinds:
            return None
        else:
            kind = "static"
        lower, upper = (None, values[0]) if len(values) == 1 else (values[0], values[1])
        count = None
        if kind == "static":
            start = 0 if lower is None else self._constant(lower)
            stop = self._constant(upper)
            if start is not None and stop is not None and step:
                kind, count = "literal", len(range(start, stop, step))
        return _Trip(kind, count, lower, upper, problem)

    def _constant(self, expr: cst.BaseExpression, seen: frozenset = frozenset()) -> int | None:
        """The value of an integer expression made of literals and module constants, or None."""
        if isinstance(expr, cst.Integer):
            return int(expr.evaluated_value)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            inner = self._constant(expr.expression, seen)
            return None if inner is None else (-inner if isinstance(expr.operator, cst.Minus) else inner)
        if isinstance(expr, cst.BinaryOperation):
            left, right = self._constant(expr.left, seen), self._constant(expr.right, seen)
            if left is None or right is None:
                return None
            op = expr.operator
            if isinstance(op, cst.Add):
                return left + right
            if isinstance(op, cst.Subtract):
                return left - right
            if isinstance(op, cst.Multiply):
                return left * right
            if isinstance(op, cst.FloorDivide) and right:
                return left // right
            if isinstance(op, cst.Power) and 0 <= right < 64:
                return left**right
            return None
        if isinstance(expr, cst.Name) and expr.value not in seen:
            scope = self.get_metadata(ScopeProvider, expr, None)
            if scope is None:
                return None
            assignments = list(scope[expr.value])
            if len(assignments) != 1 or not isinstance(assignments[0].scope, GlobalScope):
                return None
            target = getattr(assignments[0], "node", None)
            holder = self.context.parents.get(target) if target is not None else None
            assign = self.context.parents.get(holder) if isinstance(holder, cst.AssignTarget) else None
            if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.targets[0].target is target:
                return self._constant(assign.value, seen | {expr.value})
        return None

    def _name_kind(self, loop: cst.For, name: str) -> Kind:
        occurrence = self._occurrence(loop, name)
        return self.context.traced.kind(occurrence) if occurrence is not None else Kind.UNKNOWN

    @staticmethod
    def _occurrence(loop: cst.For, name: str) -> cst.Name | None:
        found: list[cst.Name] = []

        class Finder(cst.CSTVisitor):
            def visit_Name(self, node: cst.Name) -> bool:
                if node.value == name and not found:
                    found.append(node)
                return not found

        loop.body.visit(Finder())
        return found[0] if found else None

    # ---- what stops the rewrite ----------------------------------------------------------------------------

    def _blocker(self, loop: cst.For, trip: _Trip, flow: LoopFlow, impurity: Blocker | None, kinds) -> str | None:
        if trip.problem:
            return trip.problem
        if not isinstance(loop.target, cst.Name):
            return "the loop target is not a single name"
        if loop.orelse is not None:
            return "the loop has an `else:` clause"
        if impurity is not None:
            return f"the body {impurity.reason}"
        index = loop.target.value
        if flow.targets_live_out:
            return f"the loop index `{index}` is read after the loop"
        if flow.declared:
            return f"`{flow.declared[0]}` is declared global or nonlocal"
        if flow.undefined:
            return f"`{flow.undefined[0]}` is carried from one step to the next but not defined before the loop"
        reason = self._carry_blocker(loop, flow, kinds)
        if reason is not None:
            return reason
        concrete = self._flows().concrete_use(loop, [index])
        if concrete is not None:
            return f"the body {concrete.reason}"
        return None

    def _carry_blocker(self, loop: cst.For, flow: LoopFlow, kinds) -> str | None:
        """Every carried value must be a traced value, or a Python number that the loop turns into one, with a
        shape that stays the same from step to step."""
        dataflow_flow = self._flows().flow(self._flows().enclosing_function(loop))
        function = self.context.traced.enclosing_function(loop)
        traced = self.context.traced
        numbers: list[str] = []
        init_rank: dict[str, int | None] = {}
        for name in flow.carried:
            sources = dataflow_flow.reaching(loop, name)
            if not sources:
                return f"`{name}` has no binding that reaches the loop"
            ranks = set()
            for source in sources:
                if source is UNDEFINED:
                    return f"`{name}` may be undefined when the loop starts"
                if isinstance(source, Parameter):
                    if function is None or traced.param_kind(function, name) is not Kind.TRACED:
                        return f"`{name}` is a parameter that is not known to be traced"
                    ranks.add(_annotation_rank(source.param))
                    continue
                if isinstance(source, (cst.AugAssign,)):
                    if traced.kind(source.value) is not Kind.TRACED:
                        return f"`{name}` is updated from static values before the loop"
                    ranks.add(None)
                    continue
                if isinstance(source, cst.Assign):  # a, b = ...
                    value = self._unpacked(source, name)
                    if value is None:
                        if traced.kind(source.value) is not Kind.TRACED:
                            return f"`{name}` starts as a value that is not known to be traced"
                        ranks.add(None)
                        continue
                    source = value
                if not isinstance(source, cst.BaseExpression):
                    return f"`{name}` is bound by a `{type(source).__name__.lower()}` statement before the loop"
                if _is_none(source):
                    return f"`{name}` starts as None"
                if _is_number(source):
                    numbers.append(name)
                    ranks.add(0)
                    continue
                kind = traced.kind(source)
                if kind is not Kind.TRACED:
                    what = "static" if kind is Kind.STATIC else "not known to be traced"
                    return f"`{name}` starts as a {what} value (`{_snippet(self.context.code_for(source))}`)"
                ranks.add(self._rank(source, {}))
            init_rank[name] = ranks.pop() if len(ranks) == 1 else None
        # Python numbers must become traced in the loop, or the rewrite would turn a trace-time constant into
        # a traced int32 (wrapping on overflow, unusable as a shape).
        updates = {name: self._updates(loop, name) for name in flow.carried}
        static = set(numbers)
        changed = True
        while changed:
            changed = False
            for name in list(static):
                assumed = {other: Kind.STATIC for other in static}
                values = [value for value in updates[name] if value is not None]
                if any(self._kind_assuming(value, function, assumed) is Kind.TRACED for value in values):
                    static.discard(name)
                    changed = True
        if static:
            name = sorted(static, key=list(flow.carried).index)[0]
            return f"`{name}` stays a Python number in the loop"
        for name, kind in kinds.items():
            if kind is not Kind.TRACED:
                return f"`{name}` is carried but not known to be traced"
        # Shapes.
        env = {name: rank for name, rank in init_rank.items() if rank is not None}
        env[loop.target.value] = 0 if isinstance(loop.target, cst.Name) else None
        for name in flow.carried:
            for value in updates[name]:
                if value is None:
                    if name in numbers:
                        return _NUMBER_SHAPE.format(name=name)
                    continue
                reshaping = self._reshaping(value, name)
                if reshaping is not None:
                    return (
                        f"`{name}` may change shape from one step to the next (`{reshaping}`), and lax.fori_loop "
                        "needs a fixed shape"
                    )
                rank = self._rank(value, env)
                if name in numbers and rank != 0:
                    return _NUMBER_SHAPE.format(name=name)
                if rank is not None and init_rank.get(name) is not None and rank != init_rank[name]:
                    return f"`{name}` changes rank from {init_rank[name]} to {rank} in the loop"
        return None

    @staticmethod
    def _unpacked(assign: cst.Assign, name: str) -> cst.BaseExpression | None:
        """The element of `a, b = x, y` bound to `name`, when the value is a display of the same length."""
        if len(assign.targets) != 1:
            return None
        target = assign.targets[0].target
        value = assign.value
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, (cst.Tuple, cst.List)):
            return None
        if len(target.elements) != len(value.elements):
            return None
        for t, v in zip(target.elements, value.elements):
            if isinstance(t.value, cst.Name) and t.value.value == name and not isinstance(v, cst.StarredElement):
                return v.value
        return None

    def _updates(self, loop: cst.For, name: str) -> list[cst.BaseExpression | None]:
        """The values assigned to `name` in the loop body (None: an assignment whose value is not one
        expression of its own, like `a, b = f(x)`); `x += v` gives `x + v`."""
        found: list[cst.BaseExpression | None] = []
        unpacked = self._unpacked

        class Finder(cst.CSTVisitor):
            def visit_Assign(self, node: cst.Assign) -> None:
                for target in node.targets:
                    if isinstance(target.target, cst.Name):
                        if target.target.value == name:
                            found.append(node.value)
                    elif name in target_names(target.target):
                        found.append(unpacked(node, name))

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                if isinstance(node.target, cst.Name) and node.target.value == name:
                    operator = _BINARY_FOR_AUGMENTED.get(type(node.operator))
                    if operator is None:
                        found.append(None)
                    else:
                        found.append(cst.BinaryOperation(cst.Name(name), operator(), node.value))

            def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
                if isinstance(node.target, cst.Name) and node.target.value == name and node.value is not None:
                    found.append(node.value)

            def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
                if name in target_names(node.target):
                    found.append(None)

            def visit_For(self, node: cst.For) -> None:
                if name in target_names(node.target):
                    found.append(None)

            def visit_Lambda(self, node: cst.Lambda) -> bool:
                return False

        for stmt in body_statements(loop.body):
            stmt.visit(Finder())
        return found

    def _kind_assuming(self, expr: cst.BaseExpression, function, assumed: dict[str, Kind]) -> Kind:
        """The kind of `expr` in `function` if the `assumed` names had those kinds."""
        traced = self.context.traced
        if isinstance(expr, cst.BinaryOperation) and expr not in self.context.parents:  # from `x += v`
            left = self._kind_assuming(expr.left, function, assumed)
            return max(left, self._kind_assuming(expr.right, function, assumed))
        if isinstance(expr, cst.Name) and expr.value in assumed:
            return assumed[expr.value]
        return traced.kind(expr, within=function, assume=assumed)

    def _reshaping(self, value: cst.BaseExpression, name: str) -> str | None:
        """An operation that gives the new value of the carried `name` a shape other than its old one
        (`jnp.concatenate([x, y])`, `x[1:]`, `x.reshape(...)`, `x + [y]`). Only the operations whose result
        becomes the value count: `x.at[1:].set(x[:-1])` keeps the shape of `x`."""

        def mentions(expr: cst.CSTNode) -> bool:
            return any(isinstance(n, cst.Name) and n.value == name for n in _walk(expr))

        for node in self._spine(value):
            if isinstance(node, cst.Call):
                callee = self.context.names.callee(node) if node in self.context.parents else None
                if callee in _RESHAPING and any(mentions(arg.value) for arg in node.args):
                    return self.context.code_for(node.func)
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value in _RESHAPING_METHODS and mentions(func.value):
                    return f".{func.attr.value}()"
            elif isinstance(node, cst.Attribute) and node.attr.value in ("T", "mT") and mentions(node.value):
                return f".{node.attr.value}"
            elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == name:
                if not all(_is_full_slice(element.slice) for element in node.slice):
                    return f"{name}[...]"
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Multiply)):
                sides = (node.left, node.right)
                if any(isinstance(s, (cst.List, cst.Tuple)) for s in sides) and mentions(node):
                    return "a list or tuple that grows"
        return None

    def _spine(self, expr: cst.BaseExpression):
        """`expr` and the sub-expressions whose shape it keeps or broadcasts (operands of arithmetic and of
        elementwise functions, the base of `.at[...]` updates and of `.astype`, both arms of `a if c else b`)."""
        yield expr
        if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.MatrixMultiply):
            yield from self._spine(expr.left)
            yield from self._spine(expr.right)
        elif isinstance(expr, cst.UnaryOperation):
            yield from self._spine(expr.expression)
        elif isinstance(expr, cst.IfExp):
            yield from self._spine(expr.body)
            yield from self._spine(expr.orelse)
        elif isinstance(expr, cst.Call):
            callee = self.context.names.callee(expr) if expr in self.context.parents else None
            if callee in _ELEMENTWISE:
                for arg in expr.args:
                    yield from self._spine(arg.value)
            elif isinstance(expr.func, cst.Attribute):
                receiver = expr.func.value
                method = expr.func.attr.value
                if method in AT_UPDATE and isinstance(receiver, cst.Subscript):
                    at = receiver.value
                    if isinstance(at, cst.Attribute) and at.attr.value == "at":
                        yield from self._spine(at.value)
                elif method == "astype":
                    yield from self._spine(receiver)

    # ---- ranks ---------------------------------------------------------------------------------------------

    def _rank(self, expr: cst.BaseExpression, env: dict[str, int | None], depth: int = 0) -> int | None:
        """The number of dimensions `expr` has, when cheap evidence proves it; None when unknown."""
        if depth > 12:
            return None
        rank = lambda e: self._rank(e, env, depth + 1)  # noqa: E731
        if _is_number(expr):
            return 0
        if isinstance(expr, cst.Name):
            if expr.value in env:
                return env[expr.value]
            return self._name_rank(expr, depth)
        if isinstance(expr, cst.UnaryOperation):
            return rank(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            left, right = rank(expr.left), rank(expr.right)
            if left is None or right is None:
                return None
            if isinstance(expr.operator, cst.MatrixMultiply):
                return _matmul_rank(left, right)
            return max(left, right)
        if isinstance(expr, cst.Comparison):
            parts = [rank(expr.left), *(rank(c.comparator) for c in expr.comparisons)]
            return None if None in parts else max(parts)
        if isinstance(expr, cst.IfExp):
            body, orelse = rank(expr.body), rank(expr.orelse)
            return body if body == orelse else None
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("ndim", "size"):
                return 0
            if expr.attr.value in ("real", "imag"):
                return rank(expr.value)
            return None
        if isinstance(expr, cst.Subscript):
            base = expr.value
            if isinstance(base, cst.Attribute) and base.attr.value == "shape":
                return 0 if all(isinstance(e.slice, cst.Index) for e in expr.slice) else None
            base_rank = rank(base)
            if base_rank is None:
                return None
            result = base_rank
            for element in expr.slice:
                inner = element.slice
                if isinstance(inner, cst.Slice):
                    continue
                if _is_none(inner.value) or isinstance(inner.value, cst.Ellipsis):
                    return None
                index_rank = rank(inner.value)
                if index_rank != 0:
                    return None
                result -= 1
            return result if result >= 0 else None
        if isinstance(expr, cst.Call):
            return self._call_rank(expr, env, depth)
        return None

    def _call_rank(self, call: cst.Call, env, depth: int) -> int | None:
        rank = lambda e: self._rank(e, env, depth + 1)  # noqa: E731
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if any(a.star for a in call.args):
            return None
        func = call.func
        callee = self.context.names.callee(call) if call in self.context.parents else None
        if callee is None and isinstance(func, cst.Name) and self.context.names.is_builtin(func, func.value):
            if func.value in ("len", "int", "float"):
                return 0
            if func.value == "abs" and positional:
                return rank(positional[0])
            return None
        if callee is None and isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _REDUCTION_METHODS and not call.args:
                return 0
            if method == "astype":
                return rank(func.value)
            if method in AT_UPDATE and isinstance(func.value, cst.Subscript):
                at = func.value.value
                if isinstance(at, cst.Attribute) and at.attr.value == "at":
                    return rank(at.value)
            return None
        if callee is None:
            return None
        if callee in _REDUCTIONS:
            if "axis" in keywords or "axes" in keywords or len(positional) > (2 if callee.endswith("vdot") else 1):
                return None
            return 0
        if callee in ("jax.numpy.dot", "jax.numpy.matmul") and len(positional) == 2:
            left, right = rank(positional[0]), rank(positional[1])
            return None if left is None or right is None else _matmul_rank(left, right)
        if callee in _ELEMENTWISE:
            if callee.rsplit(".", 1)[-1] in ("asarray", "array") and ("dtype" not in keywords and len(positional) > 1):
                return None
            ranks = [rank(p) for p in positional[: 3 if callee.endswith("where") else None]]
            if callee.endswith("clip"):
                ranks += [rank(v) for k, v in keywords.items() if k in ("min", "max", "a_min", "a_max")]
            return None if not ranks or None in ranks else max(ranks)
        if callee in _LIKE and positional:
            return rank(positional[0]) if "shape" not in keywords else None
        if callee in _FILLED and (positional or "shape" in keywords):
            shape = positional[0] if positional else keywords["shape"]
            return _shape_rank(shape, self)
        if callee in ("jax.numpy.arange", "jax.numpy.linspace", "jax.numpy.ravel"):
            return 1 if "axis" not in keywords else None
        if callee == "jax.numpy.reshape" and len(positional) == 2:
            return _shape_rank(positional[1], self)
        return None

    def _name_rank(self, name: cst.Name, depth: int) -> int | None:
        """A name's rank: the same for each of its bindings in the function, where each one proves it."""
        scope = self.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        assignments = list(scope[name.value])
        if not assignments:
            return None
        ranks = set()
        for assignment in assignments:
            node = getattr(assignment, "node", None)
            if isinstance(node, cst.Param):
                if self.context.traced.kind(name) is Kind.STATIC and not isinstance(assignment.scope, GlobalScope):
                    ranks.add(0)  # a static (hashable) argument used with arrays: a Python number
                else:
                    ranks.add(_annotation_rank(node))
                continue
            holder = self.context.parents.get(node) if isinstance(node, cst.Name) else None
            assign = self.context.parents.get(holder) if isinstance(holder, cst.AssignTarget) else None
            if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.targets[0].target is node:
                ranks.add(self._rank(assign.value, {}, depth + 1))
            else:
                return None
        return ranks.pop() if len(ranks) == 1 else None

    # ---- the fix -------------------------------------------------------------------------------------------

    def _fix(self, loop: cst.For, trip: _Trip, flow: LoopFlow):
        code = self.context.code_for
        carried = list(flow.carried)
        index = loop.target.value  # type: ignore[union-attr]
        body_name = self._fresh(("body", "loop_body", "body_fn", "step"))
        fori, needed = self.context.names.expression_for("jax.lax.fori_loop")
        statements = list(body_statements(loop.body))
        if isinstance(loop.body, cst.SimpleStatementSuite):
            statements = [cst.SimpleStatementLine(body=loop.body.body)]
            header = loop.body.trailing_whitespace
            footer: tuple = ()
        else:
            header = loop.body.header
            footer = tuple(loop.body.footer)
        if len(carried) == 1:
            carry_param = carried[0]
            packed = carried[0]
        else:
            carry_param = self._fresh(("carry", "state", "loop_carry"))
            packed = ", ".join(carried)
            statements.insert(0, cst.parse_statement(f"{packed} = {carry_param}\n"))
        last = statements[-1] if statements else None
        if len(carried) == 1 and not footer and _assigns_only(last, carried[0]):
            # `x = f(x)` as the last statement becomes `return f(x)`, as a person would write it.
            value = last.body[0].value
            statements[-1] = last.with_changes(body=[cst.Return(value=value)])
        else:
            returned = cst.parse_statement(f"return {packed}\n").with_changes(leading_lines=footer)
            statements.append(returned)
        if isinstance(loop.body, cst.IndentedBlock):
            block = loop.body.with_changes(body=statements, footer=())  # keeps the loop body's indentation
        else:
            block = cst.IndentedBlock(body=statements, header=header)
        function = cst.FunctionDef(
            name=cst.Name(body_name),
            params=cst.Parameters(params=[cst.Param(cst.Name(index)), cst.Param(cst.Name(carry_param))]),
            body=block,
            leading_lines=loop.leading_lines,
        )
        lower = "0" if trip.lower is None else code(trip.lower)
        initial = carried[0] if len(carried) == 1 else f"({packed})"
        call = f"{packed} = {code(fori)}({lower}, {code(trip.upper)}, {body_name}, {initial})\n"
        assignment = cst.parse_statement(call)
        return self.fix(
            "rewrite the loop with lax.fori_loop",
            [(loop, cst.FlattenSentinel([function, assignment]))],
            add_imports=[needed] if needed else [],
        )

    def _fresh(self, candidates: tuple[str, ...]) -> str:
        if self._module_names is None:
            self._module_names = {n.value for n in _walk(self.context.module) if isinstance(n, cst.Name)}
        taken = self._module_names | self._taken
        for candidate in candidates:
            if candidate not in taken:
                self._taken.add(candidate)
                return candidate
        number = 2
        while f"{candidates[0]}_{number}" in taken:
            number += 1
        self._taken.add(f"{candidates[0]}_{number}")
        return f"{candidates[0]}_{number}"


_NUMBER_SHAPE = (
    "`{name}` starts as a Python number and cannot be proven to stay a scalar in the loop "
    "(start it as an array of its in-loop shape)"
)
AT_UPDATE = frozenset({"set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max", "apply"})
_BINARY_FOR_AUGMENTED = {
    cst.AddAssign: cst.Add,
    cst.SubtractAssign: cst.Subtract,
    cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide,
    cst.FloorDivideAssign: cst.FloorDivide,
    cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
    cst.BitAndAssign: cst.BitAnd,
    cst.BitOrAssign: cst.BitOr,
    cst.BitXorAssign: cst.BitXor,
}


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _assigns_only(statement, name: str) -> bool:
    """`name = value` alone on its line."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Assign)
        and len(statement.body[0].targets) == 1
        and isinstance(statement.body[0].targets[0].target, cst.Name)
        and statement.body[0].targets[0].target.value == name
    )


def _is_number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    return isinstance(expr, cst.Name) and expr.value in ("True", "False")


def _is_full_slice(element) -> bool:
    return isinstance(element, cst.Slice) and element.lower is None and element.upper is None and element.step is None


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _matmul_rank(left: int, right: int) -> int | None:
    if left == 0 or right == 0:
        return None
    if left == 1 and right == 1:
        return 0
    if left == 1:
        return right - 1
    if right == 1:
        return left - 1
    return max(left, right)


def _shape_rank(shape: cst.BaseExpression, codemod: LoopToForiLoop) -> int | None:
    if isinstance(shape, (cst.Tuple, cst.List)):
        if any(isinstance(e, cst.StarredElement) for e in shape.elements):
            return None
        return len(shape.elements)
    if isinstance(shape, cst.Integer):
        return 1
    if isinstance(shape, cst.Subscript) and isinstance(shape.value, cst.Attribute):
        if shape.value.attr.value == "shape" and all(isinstance(e.slice, cst.Index) for e in shape.slice):
            return 1  # x.shape[0]: one dimension
    return None


def _annotation_rank(param: cst.Param) -> int | None:
    """The rank a jaxtyping annotation gives (`Float[Array, "n d"]` → 2); None without one."""
    annotation = param.annotation.annotation if param.annotation is not None else None
    if not isinstance(annotation, cst.Subscript) or len(annotation.slice) != 2:
        return None
    head = annotation.value
    head_name = head.attr.value if isinstance(head, cst.Attribute) else getattr(head, "value", None)
    dims = annotation.slice[1].slice
    if head_name not in _JAXTYPING or not isinstance(dims, cst.Index) or not isinstance(dims.value, cst.SimpleString):
        return None
    text = dims.value.evaluated_value
    parts = text.split()
    if any(p.startswith("*") or "..." in p or p.startswith("#") for p in parts):
        return None
    return len(parts)


def _snippet(text: str, limit: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
