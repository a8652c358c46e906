"""JF102 loop-to-scan: a Python loop in traced code that collects per-step outputs with `.append` and stacks
them, or that walks the rows of an array while carrying state, becomes `lax.scan`.

JF101 (loop-to-fori-loop) yields to this rule (`yields_to`, applied by the registry): a loop this rule rewrites
or reports is left to it, so that one loop never gets two fixes."""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass

import libcst as cst

from jaxfix.analysis.arrays import ARRAY_VALUE as _ARRAY_VALUE, OTHER as _OTHER
from jaxfix.analysis.carry import Slot, number_start, snippet
from jaxfix.analysis.dataflow import LoopFlow, activity, block_activity, body_statements
from jaxfix.analysis.loops import TRIP_COUNT_SETTINGS, bounds_may_be_traced, may_be_rows, range_trip, short_literal_range, static_advice
from jaxfix.analysis.metadata import children
from jaxfix.analysis.screen import (
    Screen, appends_to_name, may_be_compiled, may_carry, may_carry_traced, may_kind, range_may_report,
    surely_impure,
)  # fmt: skip
from jaxfix.analysis.shapes import Category
from jaxfix.analysis.traced import NOT_COMPILED, Kind
from jaxfix.codegen import carry_value, loop_function, packed
from jaxfix.codemod import Codemod, Invalid, Option, Valid, YieldsTo
from jaxfix.diagnostics import Safety
from jaxfix.facts.knowledge.jax import ARRAY_CONVERSIONS, LIKE


# Calls that turn the collected list into one array: stacked along a new leading axis, as lax.scan stacks.
_STACK = "jax.numpy.stack"
_ARRAY, _LIKE = ARRAY_CONVERSIONS, LIKE


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


_FINDINGS: "weakref.WeakKeyDictionary[object, dict[tuple[cst.CSTNode, tuple[int, int]], tuple[ScanFinding | None, str | None]]]" = weakref.WeakKeyDictionary()


def scan_finding(context, loop: cst.For, trip_counts: tuple[int, int] | None = None) -> ScanFinding | None:
    """JF102's finding on `loop`, None when the loop is none of its business (computed once per module).
    `trip_counts`: the (min-trip-count, report-trip-count) options; JF102's own by default."""
    trip_counts = trip_counts or (LoopToScan.option("min-trip-count"), LoopToScan.option("report-trip-count"))
    return _analysed(context, loop, trip_counts)[0]


def scan_refusal(context, loop: cst.For, trip_counts: tuple[int, int] | None = None) -> str | None:
    """Why JF102 leaves `loop` without a finding, where it recognised something of its pattern (else None)."""
    return _analysed(context, loop, trip_counts)[1]


def _analysed(context, loop: cst.For, trip_counts: tuple[int, int] | None) -> tuple[ScanFinding | None, str | None]:
    trip_counts = trip_counts or (LoopToScan.option("min-trip-count"), LoopToScan.option("report-trip-count"))
    known = _FINDINGS.setdefault(context, {})
    if (loop, trip_counts) not in known:
        analysis = _ScanAnalysis(context, loop, *trip_counts)
        known[(loop, trip_counts)] = (analysis.run(), analysis.why)
    return known[(loop, trip_counts)]


class LoopToScan(Codemod):
    """
    ## What it does
    Finds Python `for` loops in traced code (a function under `jax.jit`, `jax.grad`, `jax.vmap`, a lax body,
    ...) that carry state from one step to the next and either collect one output per step
    (`ys = []`, `ys.append(y)`, then `jnp.stack(ys)`), or walk the rows of an array (`for x in xs`,
    `for t in range(xs.shape[0])` reading `xs[t]`, backwards with `reversed(...)`), and rewrites them into
    `lax.scan` with a named local step function.

    ## Why is this bad?
    JAX traces a Python loop by running it: N steps put N copies of the body, and N stacked outputs, into
    the compiled program, so compile time grows with N. `lax.scan` traces the body once. On CPU with JAX
    0.10 (2 cores; `benchmarks/loops.py --cases 'loop_to_scan/*' --sizes 10,300,1000`), the RNN of this
    rule's corpus (`h = tanh(W h + U x_t)`, 32 units, every `h` stacked) compiled in 10.8 s as a 300-step
    Python loop and in 0.14 s as `lax.scan` (75x), 36.8 s against 0.17 s at 1000 steps, and ran 3x faster;
    its gradient example (`jax.grad` through 30 steps) compiled 13x faster. At 10 steps the scan still
    compiled 3x faster (`benchmarks/loop_crossover.py` puts the crossover near 3 steps); loops of fewer than
    10 known steps are left alone all the same, with JF101's threshold: a handful of unrolled steps is cheap,
    and often written that way on purpose.

    ## Example
    ```python
    @jax.jit
    def rnn(w, u, h, xs):
        hs = []
        for t in range(xs.shape[0]):
            h = jnp.tanh(w @ h + u @ xs[t])
            hs.append(h)
        return jnp.stack(hs)
    ```

    ## Use instead
    ```python
    @jax.jit
    def rnn(w, u, h, xs):
        def step(h, x_t):
            h = jnp.tanh(w @ h + u @ x_t)
            return h, h
        h, hs = jax.lax.scan(step, h, xs)
        return hs
    ```
    The carried variables keep their names (several are a tuple unpacked at the top of the step); each
    collected list becomes one of scan's stacked outputs, under the list's name, and `jnp.stack(ys)`,
    `jnp.array(ys)` or `jnp.asarray(ys)` becomes `ys` (`jnp.stack(ys, axis=k)` becomes
    `jnp.moveaxis(ys, 0, k)`). A loop over `range(xs.shape[0])` whose index is used only as `xs[t]` scans
    over `xs` itself (several arrays as a tuple, when they provably have the same length: `ws[t]` with
    `ws = jnp.zeros_like(xs)`); one that uses its index otherwise scans over `jnp.arange(...)`, and one that
    does not use it at all passes `length=`. A loop that walks backwards (`reversed(xs)`,
    `reversed(range(n))`, `range(n - 1, -1, -1)`, `xs[::-1]`) scans with `reverse=True`; since scan then
    returns outputs in the order of `xs` while the Python list was built last row first, the stacked list
    becomes `ys[::-1]` (and `jnp.stack(ys[::-1])` becomes `ys`). A list put back in time order right after
    the loop (`ys = ys[::-1]`, `ys = list(reversed(ys))`, `ys.reverse()`, or `jnp.stack(list(reversed(ys)))`)
    needs no reversal: the scan's outputs already are in time order, and the reversing line goes away. This is
    how reinforcement learning code computes returns and generalized advantages:
    ```python
    gae = 0.0
    advantages = []
    for t in reversed(range(len(rewards) - 1)):
        delta = rewards[t] + gamma * values[t + 1] * (1 - dones[t]) - values[t]
        gae = delta + gamma * lam * (1 - dones[t]) * gae
        advantages.append(gae)
    advantages = advantages[::-1]
    return jnp.stack(advantages)
    ```
    becomes `gae, advantages = jax.lax.scan(step, gae, jnp.arange(len(rewards) - 1), reverse=True)`. Where
    jaxfix cannot prove that `gae` is a scalar after one step (`rewards` may be a `(T, envs)` batch), the scan
    starts it from the first step's shape: `gae = jnp.zeros_like(jax.eval_shape(step, gae, 0)[0])` before the
    scan (see below).

    ## Fix safety
    Unsafe. The rewrite computes the same values in every case jaxfix checks for, but some differences remain,
    each of one of two kinds: it **fails loudly** (raises instead of computing, so it cannot go unnoticed) or
    it **may compute different numbers** (which is what `jaxfix apply --verify` and `jaxfix verify` check):
    - **May compute different numbers.** In a loop that scans over `jnp.arange(...)`, the index is a traced
      int32 instead of a Python int: arithmetic with it wraps at 2**31, and `t / n` is computed in float32
      instead of float64, which may round differently in the last bit (`xs[t] * (t / n) * 3.3` did for 21 of 37
      lengths).
    - **Same numbers, or fails loudly.** A carried Python number (`total = 0.0`) becomes a weakly typed array
      promoted to the loop's dtype, as the Python loop's first step would make it; after the loop it is an
      array, not a Python float. JAX keeps a Python float weak, so `rewards[t] + gamma * 0.0` with float32
      (float16, bfloat16) arrays is computed in that dtype either way, and the scan's first step gives the
      Python loop's numbers exactly, op by op (compiled in float16 or bfloat16, see below). Where jaxfix proves that every update of such a carry is a scalar
      (numbers, `x: float`/`x: int` parameters, the index of a `range`, one element of an array of known rank:
      `rewards: Float[Array, "T"]` indexed by `t`), the scan starts from the number as written. If the proof is
      wrong (the annotation lies), the scan raises at trace time ("carry input and carry output must have equal
      types"); it never computes other numbers.
    - **Same numbers in one dtype; may compute different numbers across dtypes.** Elsewhere the carry may
      become an array of another shape on the first step (a row, for a `(T, envs)` batch), and the scan starts
      it from that step's shape and dtype: `jax.eval_shape` traces the step once with the Python number, as the
      loop's first step ran, computing nothing, and the carry starts as `jnp.zeros_like` of the result
      (`jnp.full_like(..., total)` for another number). The first step then combines the step's values with
      zeros of the step's own dtype instead of a weak 0.0: the same numbers where the step computes in one
      dtype (checked bit for bit in float32, float16 and bfloat16 on `(T,)` and `(T, envs)` batches, op by op,
      and compiled in float32; compiled in float16 or bfloat16, XLA may round a loop body's arithmetic otherwise
      than the same operations unrolled, by a few units in the last place, depending on the CPU: seen on one
      with AVX512-FP16 and AMX-BF16). A step
      that mixes dtypes (a bfloat16 product added to a float32 value) may round its first step differently in
      the last bits, as a scan started from 0.0 does too: the Python loop's first step computes `0.0 + x` in
      bfloat16, the scan in the carry's float32. A step whose shape still changes after its first step makes
      the scan raise at trace time ("carry input and carry output must have equal types").
    - **Fails loudly.** Assumed, not proven: an argument indexed by the loop's index (`rewards[t]`) is an array
      when it is a non-static argument of the traced function (`@jax.jit def gae(rewards, ...)`), not rebound,
      not annotated as something else, and not passed a list, tuple or dict by a call in the module. JAX hands
      such an argument a pytree of arrays; if it is a tuple, list or dict rather than one array, indexing it
      with the scan's traced index raises at trace time (TracerIntegerConversionError, or "unhashable type")
      where the Python loop's int index worked: the rewrite fails loudly, it does not compute other numbers.
      The same holds for a name bound once to a model's output, one array by the library's convention: a Flax
      module's `model.apply(variables, x)` (not with `mutable=` or `capture_intermediates=`, which return a
      tuple), a TrainState's `state.apply_fn(...)`, a Haiku `net.apply(params, x)`. The message names the
      values it assumes are arrays.
    - **May compute different numbers.** Evidence, not proof: a loop over the rows of an unannotated argument
      of a traced function (`for x in xs`) is rewritten where a recorded run (`jaxfix record`) saw one array
      there in every call, or where every call of the function in the project passes one (`jnp.ones((8, 4))`,
      `jax.random.normal(key, (8, 4))`, or a local bound once to such a call; no evidence when the function is
      also used as a value, or a call the project index cannot resolve bears its name). A caller outside the
      project that passes a tuple of rows would get other numbers (the scan walks the rows of each leaf). The
      message names the evidence; `jaxfix apply --verify` keeps the fix only where the function verifies.
    - **Runs where the original raised, or fails loudly.** A loop of zero steps: `jnp.stack([])` raises, the
      scan returns an empty array of shape `(0, ...)` (`verify` compares nothing where the original raised). A
      carry started from the first step's shape reads the first row (`xs[0]`, `rewards[0]`) to trace that
      step, so on empty arrays the rewrite raises IndexError at trace time where the loop ran zero times.
    - **Fails loudly.** A value whose shape or dtype changes from one step to the next in a way jaxfix cannot
      see (a float16 start updated in float32, a helper that returns another shape): the Python loop promotes
      it or fails in `jnp.stack`, the scan raises at trace time ("scan body function carry input and carry
      output must have equal types"). jaxfix proves that the carried values keep their rank and dtype category,
      and relies on the stack for the outputs, since it already requires one shape for every step's output.
    - **May compute different numbers.** XLA compiles one loop instead of an unrolled sequence, so fusion and
      float rounding may differ in the last bits.
    Run `jaxfix apply --unsafe-fixes`, or check the rewrite with `--verify`.

    ## When it stays quiet
    - Loops outside traced code; loops over lists, tuples, pytrees (the layers of a model), NumPy data,
      `zip`/`enumerate`; loops whose carried values are all static (computed at trace time); loops over an
      unannotated argument that neither a recorded run nor every call in the project shows to be one array.
    - Loops in functions that only eager `jax.vmap`/`jax.grad` reach (no `jax.jit`, pmap or lax body): there
      each call traces the lax loop's body anew and compiles it again (10 compilations in 10 calls of the
      corpus's `eager_vmap_only`, 4.5x slower than the Python loop). A loop of a traced length is still fixed:
      the original cannot run at all.
    - Loops with a known trip count below 10: unrolled, they compile faster than a scan.
    - Loops that collect outputs but carry nothing from one step to the next: each step is independent, which
      is `jax.vmap`'s job, not a scan's.
    - Forward `for i in range(...)` loops that collect nothing and use their index otherwise than `xs[i]`:
      JF101 (loop-to-fori-loop) rewrites those (a backward one is a scan with `reverse=True`).
    - Loops it cannot rewrite whose trip count is below 100 or unknown here (a loop over the rows of `xs`).

    It reports without a fix, saying what stopped it, when a loop of at least 100 known steps (or a traced
    number of steps, which a scan cannot take: use `lax.while_loop`, or a fixed length) has a body with
    `break`/`continue`/`return`/`raise`/`yield`/`global`/`nonlocal`/`del`, a `with` or `try` block, I/O,
    calls to functions not known to be pure, or stores into outside objects; a list that is not created
    empty just before the loop, is appended to conditionally or more than once per step, or is used after the
    loop otherwise than stacked (`ys[-1]`, `len(ys)`, `ys + [...]`, returned as a list); an appended value
    that is static, or (for `jnp.array(ys)`) not proven to be one array rather than a tuple; a carried value
    that changes shape or dtype, starts as `None` or a static value; an index used as a Python int.

    Whatever the trip count, it reports without a fix a loop it would rewrite but for a carry that starts as a
    Python number on one path and as something else on another (`gae = 0.0`, then `if warm: gae = xs[0]`),
    whose shape after one step it cannot prove, and says how to start it: `gae = jnp.zeros_like(xs[0])`, if
    that is its shape in the loop.
    """

    code = "JF102"
    name = "loop-to-scan"
    summary = "for-loop in traced code collecting per-step outputs or walking an array's rows: use lax.scan"
    fix_safety = Safety.UNSAFE
    OPTIONS = tuple(Option(*setting) for setting in TRIP_COUNT_SETTINGS)
    # Independent steps writing the rows of a fresh buffer are a batch: JF301's jax.vmap, where it rewrites them.
    yields_to = (YieldsTo("JF301", "left to JF301 (batch-loop-to-vmap): its steps are independent", fixed_only=True),)

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs a `for` loop in a function TracedAnalysis may find traced that may carry a name from
        one step to the next (`screen.may_carry`; one that may be TRACED, `may_carry_traced`, unless the range's
        bounds may be traced), over what `_iteration` may accept: `range` (not a short
        literal one; a forward one needs `.append` or an index `a[i]` in its body: without either it is JF101's),
        `reversed(...)`, or rows of an array: a name, subscript, arithmetic, `.T`/`.real`/`.imag`, a call that
        may be a jax.numpy/lax/nn/random function or an array method. Attributes (`self.layers`), `zip`,
        `enumerate`, other calls and displays are never proven to be an array's rows."""
        in_traced_code = getattr(screen, "in_traced_code", None)
        if in_traced_code is not None:
            loops = in_traced_code(ast.For)
        else:  # a Screen without that query: every loop inside a function
            functions = [f for f in ast.walk(screen.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
            loops = (n for f in functions for n in ast.walk(f) if isinstance(n, ast.For))
        sharp = in_traced_code is not None
        report = cls.option("report-trip-count")
        for loop in loops:
            it = loop.iter
            counted = None  # the range() call whose bounds give the count, if any
            if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
                counted = it
                if short_literal_range(it, cls.option("min-trip-count")):
                    continue
                if len(it.args) < 3 and not _collects_or_indexes(screen, loop):
                    continue  # a forward range loop collecting nothing: JF101's
                if sharp and not range_may_report(screen, loop, it, report, blocked=_surely_blocked(screen, loop)):
                    continue
            elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "reversed":
                inner = it.args[0] if len(it.args) == 1 else None
                range_call = isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "range"
                counted = inner if range_call else None
                if inner is not None and not range_call and not may_be_rows(screen, inner):
                    continue
                if sharp and range_call and not range_may_report(screen, loop, inner, report, blocked=_surely_blocked(screen, loop)):
                    continue
                if sharp and inner is not None and not range_call and not _rows_may_report(screen, loop, inner):
                    continue
            elif not may_be_rows(screen, it):
                continue
            elif sharp and not _rows_may_report(screen, loop, it):
                continue
            if not sharp:
                if may_carry(screen, loop):
                    return True
            elif may_carry_traced(screen, loop) or (
                counted is not None and bounds_may_be_traced(screen, counted) and may_carry(screen, loop)
            ):
                return True  # a count that is not traced needs a traced carry (else: a static computation)
        return False

    VALID = (
        # a short loop: four steps unroll into less code than a scan
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    ys = []\n    for _ in range(4):\n"
            "        x = jnp.sin(x)\n        ys.append(x)\n    return jnp.stack(ys)\n"
        ),
        # nothing carried: jax.vmap's job
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    ys = []\n    for k in range(50):\n"
            "        ys.append(jnp.sin(k * x))\n    return jnp.stack(ys)\n"
        ),
        # layers of a model: a loop over a Python list
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(params, x):\n    outs = []\n"
            "    for w, b in params:\n        x = jnp.tanh(x @ w + b)\n        outs.append(x)\n    return outs\n"
        ),
        # a range loop that collects nothing and uses its index as a number: JF101's
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    for i in range(100):\n"
            "        x = x + jnp.sin(i * x)\n    return x\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(w, h):\n    hs = []\n    for _ in range(100):\n"
            "        h = jnp.tanh(w @ h)\n        hs.append(h)\n    return jnp.stack(hs)\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(w, h):\n    def step(h, _):\n"
            "        h = jnp.tanh(w @ h)\n        return h, h\n    h, hs = jax.lax.scan(step, h, length=100)\n"
            "    return hs\n",
            message="lax.scan",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n@jax.jit\ndef f(xs):\n"
            "    total = jnp.zeros(xs.shape[1:])\n    for x in reversed(xs):\n        total = 0.5 * total + x\n"
            "    return total\n",
            "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n@jax.jit\ndef f(xs):\n"
            "    total = jnp.zeros(xs.shape[1:])\n    def step(total, x):\n        total = 0.5 * total + x\n"
            "        return total, None\n    total, _ = lax.scan(step, total, xs, reverse=True)\n    return total\n",
            message="rows of `xs`",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    ys = []\n    for _ in range(300):\n"
            "        x = jnp.cos(x)\n        ys.append(x)\n    return ys[-1]\n",
            None,
            message="used as a list after the loop (`ys[-1]`)",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, n):\n    ys = []\n    for _ in range(n):\n"
            "        x = jnp.cos(x)\n        ys.append(x)\n    return jnp.stack(ys)\n",
            None,
            message="static number of steps",
        ),
    )

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.iter, cst.Call) and isinstance(node.iter.func, cst.Name) and node.iter.func.value == "range":
            args = node.iter.args
            if 1 <= len(args) <= 2 and all(isinstance(a.value, cst.Integer) and a.keyword is None for a in args):
                values = [int(a.value.evaluated_value) for a in args]
                start, stop = (0, values[0]) if len(values) == 1 else values
                if stop - start < self.option("min-trip-count"):
                    # a short loop, decided before any analysis
                    return self.decline(node.iter, f"a loop of {stop - start} known steps: below min-trip-count ({self.option('min-trip-count')})")
        trip_counts = (self.option("min-trip-count"), self.option("report-trip-count"))
        finding = scan_finding(self.context, node, trip_counts)
        if finding is None:
            reason = scan_refusal(self.context, node, trip_counts)
            if reason == "not in traced code":
                return self.decline_untraced(node.iter)
            if reason is not None:
                self.decline(node.iter, reason)
            return
        fix = None if finding.plan is None else _Rewrite(self, finding.plan).fix()
        self.report(finding.node, finding.message, fix)


# ---- analysis ----------------------------------------------------------------------------------------------


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
                and self.context.names.callee(source) in _LIKE
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
        if callee == _STACK or callee in _ARRAY:
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


def _atomic(code: str) -> bool:
    """Whether `code` can be subscripted as it is: a name, an attribute, a subscript or a call."""
    try:
        expr = cst.parse_expression(code)
    except Exception:
        return False
    return isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript, cst.Call))


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


def _singular(name: str) -> str:
    if name.endswith("ies") and len(name) > 3:
        return name[:-3] + "y"
    if name.endswith("sses"):
        return name[:-2]
    if name.endswith("s") and not name.endswith("ss") and len(name) > 1:
        return name[:-1]
    return name


# ---- the rewrite -------------------------------------------------------------------------------------------


class _Rows(cst.CSTTransformer):
    """Replaces the `xs[t]` of a range loop by the row the scan hands the step; `unpack` is the line that
    unpacks several rows from the step's parameter."""

    def __init__(self, replacements: dict[cst.Subscript, str], unpack: cst.BaseStatement | None = None) -> None:
        super().__init__()
        self.replacements = replacements
        self.unpack = unpack

    def leave_Subscript(self, original_node, updated_node):
        name = self.replacements.get(original_node)
        if name is None:
            return updated_node
        return cst.Name(name, lpar=original_node.lpar, rpar=original_node.rpar)


def _comment_lines(line: cst.SimpleStatementLine) -> list[cst.EmptyLine]:
    """The lines to keep when `line` goes away: its leading lines, and its trailing comment on a line of its own."""
    lines = list(line.leading_lines)
    comment = line.trailing_whitespace.comment
    if comment is not None:
        lines.append(cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(""), comment=comment))
    return lines


class _Rewrite:
    """Builds the fix of one plan: the step function and the scan call in place of the loop, the `ys = []`
    lines removed (their comments moved to the next line), the stacking calls replaced by the outputs."""

    def __init__(self, codemod: LoopToScan, plan: Plan) -> None:
        self.codemod = codemod
        self.context = codemod.context
        self.plan = plan
        self.names = codemod.context.fresh_names
        self.imports = []

    def _code(self, node: cst.CSTNode) -> str:
        return self.context.code_for(node)

    def _expression(self, qualified: str) -> str:
        expr, needed = self.context.names.expression_for(qualified)
        if needed is not None and needed not in self.imports:
            self.imports.append(needed)
        return self._code(expr)

    def fix(self):
        plan, loop = self.plan, self.plan.loop
        carried = list(plan.carried)
        step = self.names.take("step", "scan_step", "step_fn")
        carry_param = None if len(carried) == 1 else self.names.take("carry", "state", "loop_carry")
        x_param, xs, rows = self._inputs()
        kept, footer, returned = self._step_body(rows)
        changes, leading = self._remove_creations()

        body = loop.body
        if isinstance(body, cst.IndentedBlock):
            new_body = body.with_changes(body=kept, footer=footer)
        else:
            new_body = cst.IndentedBlock(body=kept, header=body.trailing_whitespace)
        carry_out = carried[0] if len(carried) == 1 else f"({packed(carried)})"
        outputs = [returned[output.name] for output in plan.outputs]  # in the order of the scan's targets
        ys_out = "None" if not outputs else outputs[0] if len(outputs) == 1 else f"({', '.join(outputs)})"
        function = loop_function(
            loop.with_changes(body=new_body, leading_lines=leading),
            name=step,
            params=[carried[0] if carry_param is None else carry_param, x_param],
            carried=carried,
            carry_param=carry_param,
            returns=f"{carry_out}, {ys_out}",
        )

        names = [output.name for output in plan.outputs]
        scan = self._expression("jax.lax.scan")
        arguments = f"{step}, {carry_value(carried)}, {xs}" + (", reverse=True" if plan.iteration.reverse else "")
        if names:
            ys_target = names[0] if len(names) == 1 else f"({packed(names)})"
            call = f"{carry_out}, {ys_target} = {scan}({arguments})\n"
        elif self._throwaway_free():
            call = f"{carry_out}, _ = {scan}({arguments})\n"
        else:
            call = f"{packed(carried)} = {scan}({arguments})[0]\n"
        # The comments of a removed `ys = ys[::-1]` line go above the scan, which now keeps the time order.
        reversal_comments = [line for output in plan.outputs if output.reversal for line in _comment_lines(output.reversal)]
        scan_line = cst.parse_statement(call).with_changes(leading_lines=reversal_comments)
        starts = self._restart_lines(step)
        changes.insert(0, (loop, cst.FlattenSentinel([function, *starts, scan_line])))
        for output in plan.outputs:
            if output.reversal is not None:
                changes.append((output.reversal, cst.RemovalSentinel.REMOVE))
            for use in output.uses:
                changes.extend(self._use(output.name, use, plan.iteration.reverse != (output.reversal is not None)))
        return self.codemod.fix("rewrite the loop with lax.scan", changes, add_imports=self.imports)

    def _restart_lines(self, step: str) -> list[cst.BaseStatement]:
        """For carries that start as Python numbers and become arrays of an unproven shape: lines that start them
        as arrays of the first step's shape and dtype, `gae = jnp.zeros_like(jax.eval_shape(step, gae, t)[0])`
        (`jnp.full_like(..., gae)` for another number). `jax.eval_shape` traces the step with the Python
        number, as the loop's first step runs, and computes nothing."""
        plan = self.plan
        if not plan.restart:
            return []
        carried = list(plan.carried)
        first = self._first_input()
        shapes = f"{self._expression('jax.eval_shape')}({step}, {carry_value(carried)}, {first})[0]"
        lines = []
        if len(carried) > 1 and len(plan.restart) > 1:
            name = self.names.take("first_step", "first_carry", "step_shapes")
            lines.append(cst.parse_statement(f"{name} = {shapes}\n"))
            shapes = name
        for name, zero in plan.restart:
            struct = shapes if len(carried) == 1 else f"{shapes}[{carried.index(name)}]"
            if zero:
                value = f"{self._expression('jax.numpy.zeros_like')}({struct})"
            else:
                value = f"{self._expression('jax.numpy.full_like')}({struct}, {name})"
            lines.append(cst.parse_statement(f"{name} = {value}\n"))
        return lines

    def _first_input(self) -> str:
        """What the scan hands the step first, as far as its shape goes: the first row, or the index `lower`."""
        plan = self.plan
        iteration = plan.iteration
        if iteration.mode == "rows" or plan.rows:
            arrays = [self._code(iteration.array)] if iteration.mode == "rows" else [array for array, _ in plan.rows]
            firsts = [f"{a}[0]" if _atomic(a) else f"({a})[0]" for a in arrays]
            return firsts[0] if len(firsts) == 1 else f"({', '.join(firsts)})"
        if not plan.index_used:
            return "None"
        return "0" if iteration.lower is None else self._code(iteration.lower)

    def _inputs(self) -> tuple[str, str, _Rows]:
        """The step's second parameter, the scan's `xs` argument (or `length=`), and the transformer that
        turns a range loop's `xs[t]` into that parameter (with an unpacking line for several arrays)."""
        plan = self.plan
        iteration = plan.iteration
        target = plan.loop.target.value
        if iteration.mode == "rows":
            return target, self._code(iteration.array), _Rows({})
        if not plan.rows:
            if not plan.index_used:
                return target, f"length={self._length()}", _Rows({})
            bounds = [iteration.upper] if iteration.lower is None else [iteration.lower, iteration.upper]
            arange = self._expression("jax.numpy.arange")
            return target, f"{arange}({', '.join(self._code(b) for b in bounds)})", _Rows({})
        replacements: dict[cst.Subscript, str] = {}
        row_names = []
        for array, subscripts in plan.rows:
            singular = _singular(array)
            row = self.names.take(f"{singular}_{target}", f"{array}_{target}", f"{singular}_row")
            row_names.append(row)
            replacements.update({s: row for s in subscripts})
        if len(row_names) == 1:
            return row_names[0], plan.rows[0][0], _Rows(replacements)
        param = self.names.take("inputs", "rows", "step_inputs")
        unpack = cst.parse_statement(f"{packed(row_names)} = {param}\n")
        return param, f"({packed([array for array, _ in plan.rows])})", _Rows(replacements, unpack)

    def _step_body(self, rows: _Rows):
        """The body's statements without the appends, its footer, and what the step returns per list: the
        appended name or expression itself where nothing after the append changes it, else a new name bound
        where the append was. Comments of removed lines move to the next line that stays."""
        plan = self.plan
        body = plan.loop.body
        if isinstance(body, cst.SimpleStatementSuite):
            statements = [cst.SimpleStatementLine(body=body.body)]
        else:
            statements = list(body.body)
        footer = list(body.footer) if isinstance(body, cst.IndentedBlock) else []
        returned: dict[str, str] = {}
        pending: list[cst.EmptyLine] = []
        kept: list[cst.BaseStatement] = []
        appends = {output.append: output for output in plan.outputs}
        for index, statement in enumerate(statements):
            output = appends.get(statement)
            if output is None:
                if pending:
                    statement = statement.with_changes(leading_lines=[*pending, *statement.leading_lines])
                    pending = []
                kept.append(statement)
                continue
            later = statements[index + 1 :]
            written = set(block_activity(later).writes)
            value = output.value
            if isinstance(value, cst.Name) and value.value not in written:
                returned[output.name] = value.value
                pending.extend(_comment_lines(statement))
            elif not (set(activity(value).reads) & written):
                returned[output.name] = self._code(value.visit(rows))
                pending.extend(_comment_lines(statement))
            else:
                singular = _singular(output.name)
                name = self.names.take(singular, f"{singular}_{plan.loop.target.value}", "y")
                assign = cst.parse_statement(f"{name} = {self._code(value)}\n")
                assign = assign.with_changes(
                    body=[assign.body[0].with_changes(value=value)],
                    leading_lines=[*pending, *statement.leading_lines],
                    trailing_whitespace=statement.trailing_whitespace,
                )
                pending = []
                kept.append(assign)
                returned[output.name] = name
        kept = [s.visit(rows) for s in kept]
        if rows.unpack is not None:
            kept.insert(0, rows.unpack)
        return kept or [cst.parse_statement("pass\n")], [*pending, *footer], returned

    def _remove_creations(self):
        """Changes removing the `ys = []` lines, whose comments go to the next line that stays (the loop's
        own leading lines, returned, when that is the loop)."""
        loop = self.plan.loop
        creations = list(dict.fromkeys(output.creation for output in self.plan.outputs))
        siblings = list(getattr(self.context.parents.get(loop), "body", ()))
        leading = list(loop.leading_lines)
        changes: list = []
        carried_over: dict[cst.CSTNode, list[cst.EmptyLine]] = {}
        for creation in creations:
            changes.append((creation, cst.RemovalSentinel.REMOVE))
            position = siblings.index(creation) + 1
            while siblings[position] in creations:
                position += 1
            carried_over.setdefault(siblings[position], []).extend(_comment_lines(creation))
        for statement, lines in carried_over.items():
            if statement is loop:
                leading = [*lines, *leading]
            elif lines:
                changes.append((statement, statement.with_changes(leading_lines=[*lines, *statement.leading_lines])))
        return changes, leading

    def _length(self) -> str:
        iteration = self.plan.iteration
        upper = self._code(iteration.upper)
        if iteration.lower is None or self.context.shapes.constant(iteration.lower) == 0:
            return upper
        lower = iteration.lower
        if isinstance(iteration.upper, (cst.IfExp, cst.Lambda, cst.BooleanOperation, cst.Comparison)):
            upper = f"({upper})"
        lower_text = self._code(lower)
        if not isinstance(lower, (cst.Name, cst.Integer, cst.Attribute, cst.Subscript, cst.Call)):
            lower_text = f"({lower_text})"
        return f"{upper} - {lower_text}"

    def _throwaway_free(self) -> bool:
        """Whether binding `_` after the loop is harmless: nothing reads it later in the function, and it is
        already local or read nowhere in the function (else it would turn a global `_` local)."""
        dataflow = self.context.dataflow
        function = dataflow.enclosing_function(self.plan.loop)
        flow = dataflow.flow(function)
        if "_" in flow.live_after(self.plan.loop):
            return False
        if "_" in flow.locals:
            return True
        body = body_statements(function.body) if isinstance(function, cst.FunctionDef) else ()
        whole = block_activity(body)
        return "_" not in whole.reads and "_" not in whole.captured

    def _use(self, name: str, call: cst.Call, reverse: bool):
        """`jnp.stack(ys)` → `ys` (reversed: `ys[::-1]`), `jnp.stack(ys, axis=k)` → `jnp.moveaxis(ys, 0, k)`;
        other arguments (a dtype): the call stays, on the array."""
        arg = call.args[0]
        flipped = not isinstance(arg.value, cst.Name)  # `ys[::-1]`, `list(reversed(ys))`
        array = f"{name}[::-1]" if flipped != reverse else name
        rest = call.args[1:]
        callee = self.context.names.callee(call)
        axis = None
        if callee == "jax.numpy.stack" and len(rest) == 1:
            only = rest[0]
            if (only.keyword is None and not only.star) or (only.keyword is not None and only.keyword.value == "axis"):
                axis = only.value
        if not rest or (axis is not None and self.context.shapes.constant(axis) == 0):
            replacement = cst.parse_expression(array).with_changes(lpar=call.lpar, rpar=call.rpar)
            return [(call, replacement)]
        if axis is not None:
            moveaxis = self._expression("jax.numpy.moveaxis")
            text = f"{moveaxis}({array}, 0, {self._code(axis)})"
            return [(call, cst.parse_expression(text).with_changes(lpar=call.lpar, rpar=call.rpar))]
        if array != self._code(arg.value):
            return [(arg.value, cst.parse_expression(array))]
        return []


# ---- screen ------------------------------------------------------------------------------------------------------

def _rows_may_report(screen: Screen, loop: ast.For, array: ast.expr) -> bool:
    """`_rows` needs an array of kind TRACED, and its static count is reported only in a compiled function."""
    return may_kind(screen, array)[0] and may_be_compiled(screen, screen.function_of.get(id(loop)))


def _collects_or_indexes(screen: Screen, loop: ast.For) -> bool:
    """What a forward range loop needs for JF102 (`_appended_lists` or `_index_rows`): a `name.append(...)` in its
    body, or its target `i` used only as an index `a[i]`, with some such `a` for each name that may be a traced
    array (`_index_rows` asks every mention of `i` to be one, of arrays of kind TRACED: `may_be_rows`)."""
    index = loop.target.id if isinstance(loop.target, ast.Name) else None
    bases: dict[str, bool] = {}  # the names indexed by `i`: whether one of their `a[i]` may be a traced array's row
    parents: dict[int, ast.AST] = {}
    for statement in loop.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and appends_to_name(node):
                return True
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
    if index is None:
        return False
    for statement in loop.body:
        for node in ast.walk(statement):
            if type(node) is not ast.Name or node.id != index:
                continue
            subscript = parents.get(id(node))
            if not (type(subscript) is ast.Subscript and subscript.slice is node and type(subscript.value) is ast.Name):
                return False  # a use other than `a[i]`: `_index_rows` finds nothing
            base = subscript.value
            if not bases.get(base.id):
                bases[base.id] = may_be_rows(screen, base) and may_kind(screen, base)[0]
    return bool(bases) and all(bases.values())


def _surely_blocked(screen: Screen, loop: ast.For) -> bool:
    """Under-approximates `_check` finding a reason before it looks at carries (whose number-start reason is
    reported whatever the count): a target other than one name, an `else:`, an impure body (`.append` to a name
    aside: the scan's outputs). Then a loop whose count is neither traced nor long is not reported."""
    return not isinstance(loop.target, ast.Name) or bool(loop.orelse) or surely_impure(screen, loop, appending=True)
