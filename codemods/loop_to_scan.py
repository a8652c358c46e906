"""JF102 loop-to-scan: a Python loop in traced code that collects per-step outputs with `.append` and stacks
them, or that walks the rows of an array while carrying state, becomes `lax.scan`.

JF101 (loop-to-fori-loop) yields to this rule (`yields_to`, applied by the registry): a loop this rule rewrites
or reports is left to it, so that one loop never gets two fixes."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from jaxfix.codegen import carry_value, loop_function, packed
from jaxfix.codemod import Codemod, Invalid, Option, Valid, YieldsTo
from jaxfix.diagnostics import Diagnostic, Fix, Safety, spelled_with_import
from jaxfix.facts.flow import activity, block_activity
from jaxfix.facts.module import FileFacts, NameSupply
from jaxfix.facts.scans import STACK, Plan, code
from jaxfix.facts.spelling import in_order
from jaxfix.facts.trips import TRIP_COUNT_SETTINGS


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

    looks_at = ("For",)  # it judges each `for` loop

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each `for` loop in traced code that a lax.scan can run (with its fix), or that a scan would take but for
        what the message names (without one); why the others got no finding, for `jaxfix explain`."""
        found = []
        trip_counts = (cls.option("min-trip-count"), cls.option("report-trip-count"))
        for loop in sorted(facts.binder.nodes_of(ast.For), key=lambda n: (n.lineno, n.col_offset)):
            call = loop.iter
            if type(call) is ast.Call and type(call.func) is ast.Name and call.func.id == "range":
                if 1 <= len(call.args) <= 2 and not call.keywords and all(
                    type(a) is ast.Constant and type(a.value) is int for a in call.args
                ):
                    values = [a.value for a in call.args]
                    start, stop = (0, values[0]) if len(values) == 1 else values
                    if stop - start < trip_counts[0]:
                        # a short loop, decided before any analysis
                        facts.decline(cls.code, call, f"a loop of {stop - start} known steps: below min-trip-count ({trip_counts[0]})")
                        continue
            finding = facts.scans.finding(loop, trip_counts)
            if finding is None:
                reason = facts.scans.refusal(loop, trip_counts)
                if reason == "not in traced code":
                    facts.decline_untraced(cls.code, call)
                elif reason is not None:
                    facts.decline(cls.code, call, reason)
                continue
            if finding.plan is None:
                found.append(cls.finding(facts, finding.node, finding.message))
                continue
            plan = _FixPlan(finding.plan, facts, facts.fresh_names)
            found.append(
                cls.finding(facts, finding.node, finding.message, description="rewrite the loop with lax.scan", plan=plan)
            )
        return found

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The step function and the scan call in place of the loop, built on LibCST from the plan."""
        plan: _FixPlan = finding.plan
        loop = bridge.cst_of(plan.scan.loop)
        if not isinstance(loop, cst.For):
            return None
        changes, imports = _Rewrite(plan, bridge, loop).fix()
        return Fix(finding.fix.safety, finding.fix.description, tuple(changes), tuple(imports))


@dataclass(frozen=True)
class _FixPlan:
    scan: Plan  # the decision on `ast` (facts/scans.py)
    facts: FileFacts
    names: NameSupply


def _atomic(code: str) -> bool:
    """Whether `code` can be subscripted as it is: a name, an attribute, a subscript or a call."""
    try:
        expr = cst.parse_expression(code)
    except Exception:
        return False
    return isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript, cst.Call))


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

    def __init__(self, plan: _FixPlan, bridge, loop: cst.For) -> None:
        self.plan = plan.scan
        self.facts = plan.facts
        self.names = plan.names
        self.bridge = bridge
        self.loop = loop
        self.imports = []

    def _code(self, node: cst.CSTNode) -> str:
        return self.bridge.module.code_for_node(node)

    def _text(self, node: ast.AST) -> str:
        """The code of an `ast` node of the plan, as LibCST spells it."""
        return code(self.facts, node)

    def _expression(self, qualified: str) -> str:
        text, needed = spelled_with_import(self.facts.binder, qualified)
        if needed is not None and needed not in self.imports:
            self.imports.append(needed)
        return text

    def fix(self):
        plan, loop = self.plan, self.loop
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
        reversals = {output.name: self.bridge.required_line(output.reversal) for output in plan.outputs if output.reversal is not None}
        reversal_comments = [line for output in plan.outputs if output.name in reversals for line in _comment_lines(reversals[output.name])]
        scan_line = cst.parse_statement(call).with_changes(leading_lines=reversal_comments)
        starts = self._restart_lines(step)
        changes.insert(0, (loop, cst.FlattenSentinel([function, *starts, scan_line])))
        for output in plan.outputs:
            if output.name in reversals:
                changes.append((reversals[output.name], cst.RemovalSentinel.REMOVE))
            for use in output.uses:
                changes.extend(self._use(output.name, use, plan.iteration.reverse != (output.reversal is not None)))
        return changes, self.imports

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
            arrays = [self._text(iteration.array)] if iteration.mode == "rows" else [array for array, _ in plan.rows]
            firsts = [f"{a}[0]" if _atomic(a) else f"({a})[0]" for a in arrays]
            return firsts[0] if len(firsts) == 1 else f"({', '.join(firsts)})"
        if not plan.index_used:
            return "None"
        return "0" if iteration.lower is None else self._text(iteration.lower)

    def _inputs(self) -> tuple[str, str, _Rows]:
        """The step's second parameter, the scan's `xs` argument (or `length=`), and the transformer that
        turns a range loop's `xs[t]` into that parameter (with an unpacking line for several arrays)."""
        plan = self.plan
        iteration = plan.iteration
        target = plan.loop.target.id
        if iteration.mode == "rows":
            return target, self._text(iteration.array), _Rows({})
        if not plan.rows:
            if not plan.index_used:
                return target, f"length={self._length()}", _Rows({})
            bounds = [iteration.upper] if iteration.lower is None else [iteration.lower, iteration.upper]
            arange = self._expression("jax.numpy.arange")
            return target, f"{arange}({', '.join(self._text(b) for b in bounds)})", _Rows({})
        replacements: dict[cst.Subscript, str] = {}
        row_names = []
        for array, subscripts in plan.rows:
            singular = _singular(array)
            row = self.names.take(f"{singular}_{target}", f"{array}_{target}", f"{singular}_row")
            row_names.append(row)
            replacements.update({self.bridge.required_cst(s): row for s in subscripts})
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
        body = self.loop.body
        if isinstance(body, cst.SimpleStatementSuite):
            statements = [cst.SimpleStatementLine(body=body.body)]
        else:
            statements = list(body.body)
        footer = list(body.footer) if isinstance(body, cst.IndentedBlock) else []
        returned: dict[str, str] = {}
        pending: list[cst.EmptyLine] = []
        kept: list[cst.BaseStatement] = []
        appends = {self.bridge.required_line(output.append): output for output in plan.outputs}
        for statement in statements:
            output = appends.get(statement)
            if output is None:
                if pending:
                    statement = statement.with_changes(leading_lines=[*pending, *statement.leading_lines])
                    pending = []
                kept.append(statement)
                continue
            position = next(i for i, s in enumerate(plan.loop.body) if s is output.append)
            written = set(block_activity(plan.loop.body[position + 1 :]).writes)
            value = output.value
            if type(value) is ast.Name and value.id not in written:
                returned[output.name] = value.id
                pending.extend(_comment_lines(statement))
            elif not (set(activity(value).reads) & written):
                returned[output.name] = self._code(self.bridge.required_cst(value).visit(rows))
                pending.extend(_comment_lines(statement))
            else:
                singular = _singular(output.name)
                name = self.names.take(singular, f"{singular}_{plan.loop.target.id}", "y")
                spelled = self.bridge.required_cst(value)
                assign = cst.parse_statement(f"{name} = {self._code(spelled)}\n")
                assign = assign.with_changes(
                    body=[assign.body[0].with_changes(value=spelled)],
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
        loop = self.loop
        creations = list(dict.fromkeys(self.bridge.required_line(output.creation) for output in self.plan.outputs))
        siblings = list(getattr(self.bridge.parent(loop), "body", ()))
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
        upper = self._text(iteration.upper)
        if iteration.lower is None or self.facts.shapes.constant(iteration.lower) == 0:
            return upper
        lower = iteration.lower
        if type(iteration.upper) in (ast.IfExp, ast.Lambda, ast.BoolOp, ast.Compare):
            upper = f"({upper})"
        lower_text = self._text(lower)
        plain = type(lower) in (ast.Name, ast.Attribute, ast.Subscript, ast.Call) or (
            type(lower) is ast.Constant and (type(lower.value) in (int, bool) or lower.value is None)
        )
        if not plain:
            lower_text = f"({lower_text})"
        return f"{upper} - {lower_text}"

    def _throwaway_free(self) -> bool:
        """Whether binding `_` after the loop is harmless: nothing reads it later in the function, and it is
        already local or read nowhere in the function (else it would turn a global `_` local)."""
        facts, loop = self.facts, self.plan.loop
        function = facts.enclosing_function(loop)
        flow = facts.flow(function)
        if "_" in flow.live_after(loop):
            return False
        if "_" in flow.locals:
            return True
        body = function.body if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else ()
        whole = block_activity(body)
        return "_" not in whole.reads and "_" not in whole.captured

    def _use(self, name: str, call: ast.Call, reverse: bool):
        """`jnp.stack(ys)` → `ys` (reversed: `ys[::-1]`), `jnp.stack(ys, axis=k)` → `jnp.moveaxis(ys, 0, k)`;
        other arguments (a dtype): the call stays, on the array."""
        arguments = in_order(call)
        flipped = type(arguments[0]) is not ast.Name  # `ys[::-1]`, `list(reversed(ys))`
        array = f"{name}[::-1]" if flipped != reverse else name
        rest = arguments[1:]
        axis = None
        if self.facts.binder.callee(call) == STACK and len(rest) == 1:
            only = rest[0]
            if (type(only) is not ast.keyword and type(only) is not ast.Starred) or (
                type(only) is ast.keyword and only.arg == "axis"
            ):
                axis = only.value if type(only) is ast.keyword else only
        spelled = self.bridge.required_cst(call)
        if not rest or (axis is not None and self.facts.shapes.constant(axis) == 0):
            replacement = cst.parse_expression(array).with_changes(lpar=spelled.lpar, rpar=spelled.rpar)
            return [(spelled, replacement)]
        if axis is not None:
            moveaxis = self._expression("jax.numpy.moveaxis")
            text = f"{moveaxis}({array}, 0, {self._text(axis)})"
            return [(spelled, cst.parse_expression(text).with_changes(lpar=spelled.lpar, rpar=spelled.rpar))]
        first = spelled.args[0].value
        if array != self._code(first):
            return [(first, cst.parse_expression(array))]
        return []
