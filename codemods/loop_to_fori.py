"""JF101 loop-to-fori-loop: a Python `for i in range(...)` loop in traced code that carries state becomes
`lax.fori_loop`."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from jaxfix.codegen import carry_value, loop_function, packed
from jaxfix.codemod import Codemod, Invalid, Option, Valid, YieldsTo
from jaxfix.diagnostics import Diagnostic, Fix, Safety, spelled_with_import
from jaxfix.facts.carry import Slot
from jaxfix.facts.loops import LoopFlow
from jaxfix.facts.module import FileFacts, NameSupply, names_in
from jaxfix.facts.purity import Blocker
from jaxfix.facts.shapes import Category
from jaxfix.facts.traced import NOT_COMPILED, Kind
from jaxfix.facts.trips import TRIP_COUNT_SETTINGS, Trip, bound_text, count_text, range_trip, read_names, static_advice

_PLAIN_BOUND = (ast.Name, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.expr_context)


class LoopToForiLoop(Codemod):
    """
    ## What it does
    Finds `for i in range(...)` loops inside compiled code (a function under `jax.jit`, also through
    `jax.vmap`/`jax.grad`, a `lax.scan` body, ...) that carry state from one step to the next and collect nothing, and rewrites them
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
    Unsafe. The rewrite computes the same values in every case jaxfix checks for, but some differences remain,
    each of one of two kinds: it **fails loudly** (raises instead of computing, so it cannot go unnoticed) or
    it **may compute different numbers** (which is what `jaxfix apply --verify` and `jaxfix verify` check):
    - **May compute different numbers.** Inside the body the index is a traced (weakly typed) int32 instead of
      a Python int. Index arithmetic then wraps at 2**31 where Python integers do not, and `i / n` is computed
      in float32 instead of float64 (`x + i / n * 7.1` rounded differently for 23 of 37 trip counts).
    - **May compute different numbers.** A carried Python number (`total = 0.0`) becomes a weakly typed array
      that JAX promotes to the loop's dtype, exactly as the Python loop's first step would; after the loop the
      value is an array, not a Python float, and its weak type may differ from the Python loop's.
    - **Same numbers.** An out-of-bounds index clamps, as a Python int index into a JAX array already does.
    - **Fails loudly.** Reverse-mode differentiation works only when both bounds are static (`fori_loop` then
      lowers to `scan`); with a traced trip count it lowers to `while_loop`, which `jax.grad` rejects
      ("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic start/stop
      values"). The original could not run with a traced trip count at all.
    - **May compute different numbers.** XLA compiles one loop instead of an unrolled sequence, so fusion and
      float rounding may differ in the last bits.
    - **Fails loudly.** A carried array whose shape or dtype changes between steps in a way jaxfix cannot see
      (say `h = w @ h` with a non-square `w`, or `x = x * 0.5` on an integer `x`) makes `fori_loop` raise at
      trace time ("carry input and carry output must have equal types") instead of computing.
    No case is proven safe: even a loop with static bounds, array carries and an unused index leaves XLA free
    to simplify the unrolled sequence differently from the loop. Run `jaxfix apply --unsafe-fixes`, or check
    the rewrite with `--verify`.

    ## When it stays quiet
    - Loops outside traced code, and loops over anything but `range(...)`: lists, tuples and pytrees (the
      layers of a model), NumPy data, `zip`/`enumerate`.
    - Loops in functions that only eager `jax.vmap`/`jax.grad` reach (no `jax.jit`, pmap or lax body): there
      each call traces the lax loop's body anew and compiles it again (10 compilations in 10 calls of the
      corpus's `eager_vmap_only`, 4.5x slower than the Python loop). A loop of a traced length is still fixed:
      the original cannot run at all.
    - Loops with a known trip count below 10 (the Python loop compiles faster there) or whose carried values
      are all static (a loop that computes a configuration at trace time).
    - Loops that collect per-step results with `.append` (that is `lax.scan`'s job), and loops over
      `range(xs.shape[0])` that use the index only to read rows `xs[i]`, which JF102 (loop-to-scan) rewrites
      into a scan over `xs`: JF101 leaves every loop that JF102 rewrites or reports to it.
    - Loops it cannot rewrite whose trip count is static but below 100 or unknown here (`range(n)` with a
      static `n`): a dozen layers indexed from a list unroll by design.
    A loop whose trip count is static but not known here (`range(x.shape[0])`, a static argument) is
    rewritten, and the message says to keep the Python loop if the count stays under ~10.

    It reports without a fix, saying what stopped it, when a loop of at least 100 known steps (or a traced
    number of steps) has a body with `break`/`continue`/`return`/`raise`/`yield`/`global`/`nonlocal`/`del`,
    a `with` or `try` block, I/O (`print`, `jax.debug.print`), calls to functions not known to be pure (the
    library calls jaxfix has summaries for are: an optax optimizer's `update` where the optimizer is bound once
    to `optax.adam(...)` and the like, `optax.apply_updates`, a traced TrainState's `apply_gradients`, a Haiku
    or Flax module's `apply`), stores into outside objects, or a step other than 1; a carried variable that is not defined before the loop or
    starts as a static value or `None`; a carried value whose shape changes (`x = jnp.concatenate([x, y])`);
    a Python number that cannot be proven to stay a scalar in the loop; an index used as a Python int (a slice
    bound, `if i == 0:`, an index into a list, `range(i)`, `2 ** i`); or an index read after the loop.
    A loop of a traced number of steps in a function that `jax.jit`, `jax.vmap` or a lax body stages is
    reported even when no lax loop could take it (it carries nothing, or collects outputs JF102 cannot stack):
    the Python loop cannot run there at all. The message names the bound and the way out, such as
    `static_argnames=('n',)` on the jit when `n` is an argument. `jaxfix explain FILE:LINE` says why a loop
    got no finding (a short loop, an unknown trip count, a blocker in a loop it does not report).
    """

    code = "JF101"
    name = "loop-to-fori-loop"
    summary = "for-loop over range() in traced code carrying state: use lax.fori_loop"
    fix_safety = Safety.UNSAFE
    screen = ("range",)
    # A loop that cannot be rewritten is reported only when unrolling it clearly costs: a model's dozen layers
    # indexed from a list is not worth a warning, a thousand-step loop with a `break` is.
    OPTIONS = tuple(Option(*setting) for setting in TRIP_COUNT_SETTINGS)
    # One loop gets one finding: JF102's, where it rewrites or reports the loop (it collects outputs, reads only
    # rows `xs[i]`, or walks backwards); JF301's, where its steps are independent and it rewrites them.
    yields_to = (
        YieldsTo("JF102", "left to JF102 (loop-to-scan), which rewrites or reports this loop"),
        YieldsTo("JF301", "left to JF301 (batch-loop-to-vmap): its steps are independent", fixed_only=True),
    )

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

    looks_at = ("For",)  # it judges each `for` loop over range(...)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each `for ... in range(...)` loop in traced code that a lax.fori_loop can run (with its fix), or whose
        Python loop cannot run under tracing or unrolls at least report-trip-count times (without one)."""
        found = []
        for loop in sorted(facts.binder.nodes_of(ast.For), key=lambda n: (n.lineno, n.col_offset)):
            finding = _Judgement(cls, facts, loop).finding()
            if finding is not None:
                found.append(finding)
        return found

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The loop's body as a named local function, and the loop as one `lax.fori_loop` call."""
        plan: _Plan = finding.plan
        loop = bridge.cst_of(plan.loop)
        if not isinstance(loop, cst.For):
            return None
        carried = list(plan.carried)
        body_name = plan.names.take("body", "loop_body", "body_fn", "step")
        carry_param = None if len(carried) == 1 else plan.names.take("carry", "state", "loop_carry")
        function = loop_function(
            loop,
            name=body_name,
            params=[plan.loop.target.id, carried[0] if carry_param is None else carry_param],
            carried=carried,
            carry_param=carry_param,
        )
        call = (
            f"{packed(carried)} = {plan.fori}({plan.lower}, {plan.upper}, {body_name}, {carry_value(carried)})\n"
        )
        changes = ((loop, cst.FlattenSentinel([function, cst.parse_statement(call)])),)
        return Fix(finding.fix.safety, finding.fix.description, changes, plan.imports)


@dataclass(frozen=True)
class _Plan:
    loop: ast.For
    carried: tuple[str, ...]
    lower: str  # code
    upper: str
    fori: str  # how `jax.lax.fori_loop` is spelled here
    imports: tuple  # the ImportSpec that spelling needs, if any
    names: NameSupply


class _Judgement:
    """JF101's decision on one loop: a finding, or a decline that `jaxfix explain` shows."""

    def __init__(self, rule: type[LoopToForiLoop], facts: FileFacts, loop: ast.For) -> None:
        self.rule, self.facts, self.loop = rule, facts, loop

    def decline(self, node: ast.AST, reason: str) -> None:
        self.facts.decline(self.rule.code, node, reason)

    def finding(self) -> Diagnostic | None:  # noqa: C901 - one condition after another, each with its reason
        rule, facts, node = self.rule, self.facts, self.loop
        call = node.iter
        if type(call) is not ast.Call or type(call.func) is not ast.Name or call.func.id != "range":
            return None
        count = len(call.args) + len(call.keywords)
        literal = not call.keywords and all(type(a) is ast.Constant and type(a.value) is int for a in call.args)
        if count in (1, 2) and literal:
            values = [a.value for a in call.args]
            start, stop = (0, values[0]) if len(values) == 1 else values
            if stop - start < rule.option("min-trip-count"):
                return self.decline(call, self._short_reason(stop - start))  # decided before any name is resolved
        if not facts.binder.is_builtin(call.func, "range"):
            return None
        traced = facts.traced
        if not traced.in_traced_code(node):
            return facts.decline_untraced(rule.code, call)
        trip = range_trip(facts, call)
        if trip is None:
            return self.decline(call, "the trip count's kind is unknown here (neither a traced value nor one known at trace time)")
        if trip.kind == "literal" and trip.count < rule.option("min-trip-count"):
            return self.decline(call, self._short_reason(trip.count))
        flow = facts.loop(node)
        impurity = facts.purity.impurity(node, flow.live_in)
        if impurity is not None and impurity.collects:
            # per-step outputs: a scan, not a fori_loop
            return self._refuse_traced(trip, f"the body {impurity.reason}, which is lax.scan's job, and JF102 cannot rewrite it")
        if not flow.carried:
            return self._refuse_traced(trip, "nothing is carried from one step to the next")
        kinds = {name: facts.carry.name_kind(node, name) for name in flow.carried}
        if Kind.TRACED not in kinds.values() and trip.kind != "traced":
            # nothing traced is carried: a static computation at trace time
            return self.decline(call, "every carried value is known at trace time: a static computation")
        reason = self._blocker(trip, flow, impurity)
        if reason is None and trip.kind != "traced" and not traced.compiled(traced.enclosing_function(node)):
            reason = NOT_COMPILED
        if reason is not None:
            if trip.kind == "traced" or (trip.kind == "literal" and trip.count >= rule.option("report-trip-count")):
                message = f"{self._problem(trip)}; not rewritten to lax.fori_loop: {reason}"
                if trip.kind == "traced":
                    message += f"; {static_advice(facts, trip.upper)}"
                return rule.finding(facts, call, message)
            return self.decline(call, f"not rewritten to lax.fori_loop: {reason}; {self._unreported(trip)}")
        carried = ", ".join(f"`{name}`" for name in flow.carried)
        if trip.kind == "traced":
            message = (
                f"{self._problem(trip)}; lax.fori_loop runs a traced number of steps (carrying {carried}; "
                "reverse-mode gradients then need static bounds)"
            )
        elif trip.kind == "literal":
            message = f"{self._problem(trip)}; lax.fori_loop traces the body once (carrying {carried})"
        else:
            message = (
                f"{self._problem(trip)}; lax.fori_loop traces the body once (carrying {carried}); "
                f"keep the Python loop if `{count_text(facts, trip)}` stays under ~{rule.option('min-trip-count')}"
            )
        fori, needed = spelled_with_import(facts.binder, "jax.lax.fori_loop")
        plan = _Plan(
            node, tuple(flow.carried), "0" if trip.lower is None else bound_text(facts, trip.lower),
            bound_text(facts, trip.upper), fori, (needed,) if needed else (), facts.fresh_names,
        )  # fmt: skip
        return rule.finding(
            facts, call, message + self._assumes(), description="rewrite the loop with lax.fori_loop", plan=plan
        )

    def _assumes(self) -> str:
        """The clause naming what the fix may change in the numbers (its Fix safety section)."""
        index = self.loop.target.id  # _blocker refused any other target
        if any(index in names_in(statement) for statement in self.loop.body):
            return (
                f"; unsafe: `{index}` is a traced int32 in the body, not a Python int, and floats may round "
                "differently in the last bits"
            )
        return "; unsafe: floats may round differently in the last bits"

    def _short_reason(self, count: int) -> str:
        return (
            f"a loop of {count} known steps: below min-trip-count ({self.rule.option('min-trip-count')}), unrolling it "
            "compiles about as fast as a lax loop"
        )

    def _unreported(self, trip: Trip) -> str:
        """Why a loop that cannot be rewritten is not reported either."""
        threshold = self.rule.option("report-trip-count")
        if trip.kind == "literal":
            return f"not reported: {trip.count} steps, below report-trip-count ({threshold})"
        return (
            f"not reported: `{count_text(self.facts, trip)}` steps are known only at trace time (a few layers unroll "
            "by design)"
        )

    def _refuse_traced(self, trip: Trip, reason: str) -> Diagnostic | None:
        """A loop no lax loop rewrites: reported when its trip count is traced in staged code (the Python loop
        cannot run there at all), else only explained."""
        traced, call = self.facts.traced, self.loop.iter
        if trip.kind == "traced" and traced.staged(traced.enclosing_function(self.loop)) and self._argument_bound(trip):
            message = f"{self._problem(trip)}; not rewritten: {reason}; {static_advice(self.facts, trip.upper)}"
            return self.rule.finding(self.facts, call, message)
        if trip.kind == "traced":
            reason += (
                f"; not reported: `{count_text(self.facts, trip)}` is traced only by inference (not a plain argument "
                "that a transformation traces), and may well be a static field"
            )
        return self.decline(call, f"not rewritten to lax.fori_loop: {reason}")

    def _argument_bound(self, trip: Trip) -> bool:
        """Whether the traced bounds are plain arithmetic on literals and parameters that a transformation
        traces directly (`range(n)` with `n` a non-static argument of a jitted function). Attributes and calls
        are left out: `range(node.num_attributes)` on a traced pytree is a static field far more often than not,
        and a report on a loop that works would be a false alarm."""
        traced = self.facts.traced
        function = traced.enclosing_function(trip.upper)
        direct = False
        for bound in (trip.lower, trip.upper):
            if bound is None or traced.kind(bound) is not Kind.TRACED:
                continue
            for node in ast.walk(bound):
                if not isinstance(node, _PLAIN_BOUND) and not _integer_like(node):
                    return False
            direct = direct or any(traced.seeded_kind(function, name) is Kind.TRACED for name in read_names(bound))
        return direct

    def _problem(self, trip: Trip) -> str:
        if trip.kind == "traced":
            return "range() of a traced value fails under tracing"
        if trip.kind == "literal":
            return f"this Python loop unrolls {trip.count} times under tracing"
        return f"this Python loop unrolls `{count_text(self.facts, trip)}` times under tracing"

    # ---- what stops the rewrite ----------------------------------------------------------------------------

    def _blocker(self, trip: Trip, flow: LoopFlow, impurity: Blocker | None) -> str | None:
        loop, facts = self.loop, self.facts
        if trip.problem:
            return trip.problem
        if type(loop.target) is not ast.Name:
            return "the loop target is not a single name"
        if loop.orelse:
            return "the loop has an `else:` clause"
        if impurity is not None:
            return f"the body {impurity.reason}"
        index = loop.target.id
        if flow.targets_live_out:
            return f"the loop index `{index}` is read after the loop"
        bound = {index: Slot(rank=0, category=Category.INT)}
        reason = facts.carry.blocker(loop, flow, construct="lax.fori_loop", bound=bound)
        if reason is not None:
            return reason
        concrete = facts.purity.concrete_use(loop, [index])
        if concrete is not None:
            return f"the body {concrete.reason}"
        return None


def _integer_like(node: ast.AST) -> bool:
    """An int literal, or what LibCST spells as a name (`True`, `None`): the leaves a plain bound may have."""
    return type(node) is ast.Constant and type(node.value) in (int, bool, type(None))
