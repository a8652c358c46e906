"""JF301 batch-loop-to-vmap: a list of per-element results stacked into one array
(`jnp.stack([f(a, x) for x in xs])`) becomes `jax.vmap(f, in_axes=(None, 0))(a, xs)`.

Also the loop forms: `ys = []`, `for x in xs: ...; ys.append(e)`, then `jnp.stack(ys)`; and a fresh buffer
written row by row, `out = out.at[i].set(f(xs[i]))`. Their steps are independent: JF102 (loop-to-scan) takes
the loops that carry state (it leaves carry-less loops, and the buffer loops JF301 rewrites, alone), and JF101
leaves loops that append or that JF301 rewrites, so one loop never gets two fixes."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from jaxfix.analysis.arrays import CalledArray, RecordedArray
from jaxfix.analysis.dataflow import block_activity, body_statements
from jaxfix.analysis.screen import Screen
from jaxfix.analysis.shapes import FreshBuffer, same_shape
from jaxfix.analysis.syntax import row_write, target_names, walk
from jaxfix.analysis.batches import (
    Batch, Count, Refused, append_of, batched_names, index_only, mentions, simple_assignment,
    single_name_assign, snippet, stack_axis,
)
from jaxfix.analysis.batches_screen import may_batch
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Fix, Safety
from jaxfix.facts.knowledge.jax import STACKING
from jaxfix.edit.batch_loop_to_vmap_fix import keep_body_comments, row_names, tuple_text

_AT = re.compile(r"\.\s*at\b")
_RANDOM_NOTE = (
    "; the body draws random numbers: jax.vmap draws the loop's numbers with JAX's default threefry PRNG, not "
    "with the rbg implementations; check the stream if you rely on it"
)
# The Fix safety section's "may compute different numbers", in the message of every fix.
_ROUNDING_NOTE = "; unsafe: batched products and reductions may round differently in the last bits"
_INDEX_NOTE = (
    "; unsafe: the index is mapped as an int32 array (the loop's was a Python int), and batched products and "
    "reductions may round differently in the last bits"
)

class _NotThis(Exception):
    """Not this rule's pattern after all: no finding."""


@dataclass
class _Spec:
    """What jax.vmap maps: `func` (code) over `arguments` with `axes`; `function` is the local function to
    define first, when the element is not a single call."""

    func: str
    axes: list
    arguments: list[str]
    random: bool
    function: cst.FunctionDef | None = None


class BatchLoopToVmap(Codemod):
    """
    ## What it does
    Finds per-element results over the rows of a JAX array that are stacked into one array,
    `jnp.stack([f(a, x) for x in xs])`, `jnp.array([...])`, `jnp.stack(list(map(f, xs)))`, over `zip(xs, ys)`,
    `enumerate(xs)`, `range(len(xs))` reading `xs[i]` or `range(n)`, a `for` loop that appends one result
    per element to a list created empty just before it and stacked after it, or a loop that writes each row
    of a fresh buffer, `out = jnp.zeros((n, d))`, `for i in range(n): out = out.at[i].set(f(xs[i]))`, and
    rewrites them into one batched call: `jax.vmap(f, in_axes=(None, 0))(a, xs)`. `in_axes` is 0 for the
    arrays the loop walks and None for everything else; `jnp.stack(..., axis=k)` becomes `out_axes=k`. An
    index used as a number (`x * i`, `jax.random.fold_in(key, i)`) is mapped over `jnp.arange(n)`. An
    element that is not a single call of that shape (or a loop body with more statements) becomes a named
    local function first, keeping its statements and comments. It works in eager and in traced code.

    A loop writing rows is rewritten only when jaxfix proves that the buffer is fresh (`jnp.zeros`, `ones`,
    `empty`, `full`, `*_like`, created before the loop and not read in between), exactly as many rows long as
    the loop runs, that each step writes its row once, unconditionally, and nothing else (no other state
    flows between steps, the buffer is not read in the loop), and that each row has the shape of a row of the
    buffer (`.at[i].set` broadcasts a smaller value across the row, jax.vmap would stack it as it is). Where
    the rows' dtype is not proven to be the buffer's, the result gets `.astype(dtype)`, the cast `.at[i].set`
    made. The shape and dtype proofs are JF104's (jaxfix/analysis/shapes.py; on `ast`, jaxfix/facts/symbolic.py).

    Such a loop in traced code carries the buffer, so JF101 (fori_loop) and JF102 (scan) would see it too:
    steps that do not depend on each other are a batch, so those rules leave every loop that JF301 rewrites
    (whichever rules are selected), and JF301 stays quiet on loops whose rows depend on each other. JF104
    only sees `lax.fori_loop` calls, which JF301 never rewrites.

    ## Why is this bad?
    Each element is a separate dispatch of every operation in `f` (eagerly), or a separate copy of `f` in the
    compiled program (under `jax.jit`), so the cost grows with the batch while the hardware works on one row
    at a time. Measured on CPU (JAX 0.10.2, 2 cores, `benchmarks/vmap_batch.py --batch 512`, fresh
    functions, `block_until_ready`, median call, best of 3): over the first eight positive corpus cases at batch
    512 the eager rewrite ran 99x to 309x faster than the eager loop (two runs); the per-example MLP
    (`mlp_per_example`) took 169 to 226 ms as an eager comprehension and about 1.0 ms as the eager rewrite
    (164x to 215x), 0.05 ms under `jax.jit`. Under `jax.jit` the comprehension also compiles one copy of
    `f` per element: at batch 512 the MLP took 15 s to trace and compile
    against 0.16 s for the rewrite, and ran 0.56 ms against 0.07 ms per call.
    The forms added later, same benchmark (batch 512, best of 2-3, on a machine shared with other jobs):
    loops writing rows with `.at[i].set` ran 1.7 to 3.3 s eagerly (each step copies the whole buffer)
    against 1.4 to 12 ms for the rewrite (`at_set_count_positive` 1255x, `at_set_rows_jit` 999x,
    `at_set_standardize` 281x); `range_sinusoids` 164x; the random cases `fold_in_noise` 876x and
    `split_keys_rows` 420x. `enumerate_decay`, three elementwise operations per row, gained only 39x to 43x:
    with jit disabled, the promotion of the int32 index to float costs most of its rewrite's 12 to 20 ms
    (3.6 ms when jit is not disabled).

    ## Example
    ```python
    def predict(w1, w2, x):
        return jnp.tanh(x @ w1) @ w2

    def predict_all(w1, w2, xs: jax.Array):
        return jnp.stack([predict(w1, w2, x) for x in xs])
    ```

    ## Use instead
    ```python
    def predict_all(w1, w2, xs: jax.Array):
        return jax.vmap(predict, in_axes=(None, None, 0))(w1, w2, xs)
    ```

    ## Fix safety
    Unsafe. jax.vmap computes the same values as the loop for the pure functions jaxfix accepts, but with these
    differences, each of one of two kinds: it **fails loudly** (raises instead of computing, so it cannot go
    unnoticed) or it **may compute different numbers** (which is what `jaxfix apply --verify` and
    `jaxfix verify` check):
    - **May compute different numbers.** Every form: batched matrix products and reductions may round
      differently in the last bits than one row at a time; arguments that do not depend on the element (`a`
      above) are evaluated once instead of once per element.
    - **Runs where the original raised.** Comprehensions and append loops: an empty batch makes `jnp.stack([])`
      raise, the rewrite returns an empty array. An element computed from Python numbers only would be weakly
      typed in `jnp.array([...])`; jaxfix requires each element to be a JAX array (a row, or computed from one
      or from a JAX function).
    - **Fails loudly.** Assumed, not proven: a comprehension over an unannotated `xs` walks the rows of one
      array when `xs` is a non-static argument of a traced function (`@jax.jit`), not rebound, not annotated as
      something else and not passed a list, tuple or dict by a call in the module, and the element uses the
      variable in a way that raises on a tuple, list or dict (`x @ w`, `x - m`, `x / s`, `x * 2.0`, `x.shape`,
      `jnp.tanh(x)`; not `x[0]`, `x * 2` or `x + x`, which a tuple accepts). JAX hands such an argument a pytree
      of arrays; over a tuple, jax.vmap would map the rows of every leaf where the comprehension walked the
      elements, and that use then raises at trace time instead of computing other numbers. The same holds for
      `xs` bound once to a model's output, one array by the library's convention (a Flax module's
      `model.apply(variables, x)` without `mutable=`, a TrainState's `state.apply_fn(...)`, a Haiku
      `net.apply(params, x)`). The message names the value it assumes is an array.
    - **May compute different numbers.** Evidence, not proof: a comprehension or loop over an unannotated
      argument of a traced function whose element a tuple would not make raise (`x * 2`) is rewritten when a
      recorded run (`jaxfix record`) saw one array there in every call, or when every call of the function in
      the project passes one (`jnp.ones((4, 3))`, or a local bound once to such a call; no evidence when the
      function is also used as a value, or a call the project index cannot resolve bears its name). A caller
      outside the project that passes a tuple would get other numbers. The message names the evidence;
      `jaxfix apply --verify` keeps the fix only where the function verifies.
    - **Fails loudly.** `zip(xs, ys)` and `map(f, xs, ys)` stop at the shortest array; jax.vmap raises when the
      lengths differ (ValueError: "vmap got inconsistent sizes for array axes to be mapped").
    - **Same numbers.** The loop forms: after the rewrite the list's (or buffer's) name holds the stacked
      array, and the loop's temporaries are locals of the new function (jaxfix checks that nothing reads them
      after the loop, nor the loop's index).
    - **May compute different numbers, or fails loudly.** An index used as a number: in the loop it is a Python
      int (weakly typed), in the rewrite an int32 array, so `x + i` with an `x` of a narrower integer dtype
      (int8) promotes to int32, and `rate**i` is computed in float32 rather than in Python's float64 before
      rounding. Where the index also reads `xs[i]` of an array proven to have the loop's length, jax.vmap maps
      `xs`'s rows beside `jnp.arange`; otherwise the body reads `xs[i]` with the traced index (a gather; JAX
      clamps an out-of-range index in both), and on an empty `xs` with an empty range the rewrite raises
      IndexError at trace time where the loop ran zero times (`jaxfix verify` found this one; corpus
      `split_keys_rows` now maps the keys).
    - **Same numbers.** A buffer written with `.at[i].set`: the rewrite casts the stacked rows with
      `.astype(...)` where jaxfix does not prove their dtype, as `.at[i].set` cast each row (a float into an
      int buffer truncates in both; JAX warns that the original's implicit cast will become an error).
    - **May compute different numbers.** Random numbers (`jax.random.*` in the body): the fix says so. A key
      passed unbatched gives every element the same numbers, as the loop did; per-element keys
      (`jax.random.split(key, n)` mapped or read as `keys[i]`, `jax.random.fold_in(key, i)`) give the same
      numbers as the loop with JAX's default threefry PRNG (the corpus cases `random_per_key`, `fold_in_noise`
      and `split_keys_rows` compare them), and different numbers with the `rbg` and `unsafe_rbg`
      implementations (measured: every draw differs).

    ## When it stays quiet
    - NumPy data preparation (`np.stack`, `np.array`), and lists over anything not proven to be a JAX array
      (a parameter without a `jax.Array` annotation outside traced code, a static argument, a Python list of
      arrays, a pytree of layer parameters; an unannotated traced argument whose element uses it only in ways
      a tuple accepts too, unless a recorded run or every call in the project shows it to be one array): their
      elements may differ in shape, and vmap would walk the leaves of a pytree.
    - Loops that carry state from one element to the next (JF102's scan, or JF101's), whose variable is
      read after the loop, or that a closure of the function may observe; loops whose list is not created
      empty just before them, is appended to conditionally, or is used otherwise than stacked once after the
      loop (`ys[-1]`, `len(ys)`, returned as a list).
    - Loops writing rows whose buffer is read in the loop (`out[i - 1]`, `out.sum()`: rows depend on earlier
      rows), that carry other state, that fill only part of a buffer of known length (`jnp.zeros((8, d))`,
      `range(4)`), or whose buffer is not a fresh array.
    - Comprehensions with `if` clauses (the result's length depends on the data) or several `for` clauses,
      `jnp.stack` with other arguments (`dtype=`) or with the comprehension's list built elsewhere, and
      `range(k)` with a literal `k` under 10 (a short loop stays a loop, as for JF101).

    It reports without a fix, saying what stopped it, when the element calls a function that jaxfix cannot
    resolve in the module or prove pure (a method such as `model.apply`, I/O, a global list), when the
    function uses a batched value in Python control flow (`if x > 0:`, `and`, a loop over it, `int(x)`, a
    slice bound, a NumPy or math function, `.item()`), as a shape or a count (`jnp.zeros(i)`,
    `x.reshape(i, -1)`, `jax.random.normal(key, (i,))`), or to index a Python list (`weights[i]`), when the
    element's shape may depend on the values (`jnp.nonzero`, boolean masks), when it may be a tuple rather
    than one array, when a loop body has statements other than `name = value` lines before its `.append` or
    row write, and, for a buffer, when nothing proves that the loop writes every row or that a row has the
    buffer's row shape (`w @ xs[i]` with `w` of unknown shape, one number broadcast across a row). A
    comprehension or loop over an index alone (`[f(i) for i in range(n)]`, no array's rows) that cannot be
    mapped is left alone without a report: there the index drives host-side arithmetic (brax computes its link
    roots that way), not a batch.
    """

    code = "JF301"
    name = "batch-loop-to-vmap"
    summary = "per-element results stacked or written row by row (comprehension, map, append, .at[i].set loop) over an array's rows: use jax.vmap"
    fix_safety = Safety.UNSAFE
    screen = ("stack", "array")

    @classmethod
    def may_match(cls, text: str) -> bool:
        return any(s in text for s in cls.screen) or _AT.search(text) is not None

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        return may_batch(screen)


    VALID = (
        # NumPy data preparation on the host
        Valid("import numpy as np\n\ndef f(batch):\n    return np.stack([np.asarray(x) for x in batch])\n"),
        # a Python list of layer parameters: a pytree, not a batch
        Valid(
            "import jax.numpy as jnp\n\ndef f(weights, x):\n    return jnp.stack([jnp.tanh(w @ x) for w in weights])\n"
        ),
        # rows computed from earlier rows (the buffer is read in the loop): a scan, not a batch
        Valid(
            "import jax\nimport jax.numpy as jnp\n\ndef f(xs: jax.Array):\n    out = jnp.zeros_like(xs)\n"
            "    for i in range(xs.shape[0]):\n        out = out.at[i].set(xs[i] + out[i - 1])\n    return out\n"
        ),
        # a filtered comprehension
        Valid(
            "import jax\nimport jax.numpy as jnp\n\ndef f(xs: jax.Array):\n"
            "    return jnp.stack([jnp.sin(x) for x in xs if x.ndim])\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\ndef f(w, xs: jax.Array):\n    return jnp.stack([jnp.dot(w, x) for x in xs])\n",
            "import jax\nimport jax.numpy as jnp\n\ndef f(w, xs: jax.Array):\n"
            "    return jax.vmap(jnp.dot, in_axes=(None, 0))(w, xs)\n",
            message="jax.vmap",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\ndef f(w, xs: jax.Array):\n"
            "    return jnp.stack([jnp.tanh(w @ x) + 1.0 for x in xs], axis=1)\n",
            "import jax\nimport jax.numpy as jnp\n\ndef f(w, xs: jax.Array):\n    def body(x):\n"
            "        return jnp.tanh(w @ x) + 1.0\n    return jax.vmap(body, out_axes=1)(xs)\n",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\ndef f(xs: jax.Array):\n    out = jnp.zeros_like(xs)\n"
            "    for i in range(xs.shape[0]):\n        out = out.at[i].set(jnp.sin(xs[i]))\n    return out\n",
            "import jax\nimport jax.numpy as jnp\n\ndef f(xs: jax.Array):\n"
            "    out = jax.vmap(jnp.sin)(xs).astype(xs.dtype)\n    return out\n",
            message="each row of `out`",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\ndef g(x):\n    if x.sum() > 0:\n        return x\n    return -x\n\n"
            "def f(xs: jax.Array):\n    return jnp.stack([g(x) for x in xs])\n",
            None,
            message="Python control flow",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\ndef f(model, xs: jax.Array):\n"
            "    return jnp.stack([model.apply(x) for x in xs])\n",
            None,
            message="not known to be pure",
        ),
    )

    def __init__(self, context) -> None:
        super().__init__(context)
        self._arange_used = False  # whether the fix being built maps `jnp.arange(n)` (its import may be needed)

    @property
    def batches(self):
        """The module's batch facts (`jaxfix.analysis.batches`): what the rule reads to decide."""
        return self.context.batches


    # ---- matching ------------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.context.names.callee(node)
        if callee not in STACKING or not node.args:
            return
        first = node.args[0]
        out_axis = stack_axis(node, callee)
        if first.keyword is not None or first.star or out_axis is None:
            return
        batch = self.batches.batch(first.value)
        if batch is None:
            return
        assumed = self.batches.assumed_rows(batch)
        if assumed is None:
            return  # NumPy data, a Python list, a pytree: not a batch jaxfix can prove
        shown = STACKING[callee]
        walked = "an index" if all(isinstance(a, Count) for a in batch.arrays) else "the rows of an array"
        message = f"{shown} of per-element results over {walked}: jax.vmap computes them in one batched call"
        try:
            fix, random = self._plan(node, batch, out_axis)
        except Refused as refused:
            if not index_only(batch):
                self.report(node, f"{message}; not rewritten: {refused}")
                return
            # over an index alone, what cannot be mapped is host-side arithmetic (brax's link roots)
            return self.decline(node, f"not rewritten: {refused}; not reported: over an index alone this is usually host-side arithmetic")
        if random:
            message += _RANDOM_NOTE
        if isinstance(assumed, (RecordedArray, CalledArray)):
            message += "; " + assumed.evidence()
        elif assumed[0]:
            array, why, use = assumed
            message += (
                f"; assumes `{array}` is an array: {why} (given a tuple, list or dict, jax.vmap would walk its leaves "
                f"and `{snippet(self.context.code_for(use))}` raises at trace time)"
            )
        self.report(node, message + self._unsafe_note(), fix)

    def visit_For(self, node: cst.For) -> None:
        """`ys = []`, `for x in xs: ...; ys.append(e)`, then `jnp.stack(ys)`: the loop form, when nothing
        flows from one element to the next (a loop that carries state is JF102's)."""
        if node.asynchronous is not None or node.orelse is not None:
            return
        statements = list(body_statements(node.body))
        if not statements:
            return
        appended = append_of(statements[-1])
        if appended is None:
            finding = self._row_loop(node)
            if finding is not None:
                self.report(node, *finding)
            return
        collector, element = appended
        batch = self.batches.loop_batch(node, element, statements[:-1])
        if batch is not None:
            batch.append = statements[-1]
        if batch is None:
            return
        # Each array the loop walks is proven one, or a recorded run or every call in the project passed one there.
        unproven = [a for a in batch.arrays if not (isinstance(a, Count) or self.batches.is_array(a))]
        recorded = [self.context.arrays.argument_evidence(a) for a in unproven]
        if None in recorded:
            return
        creation = self.batches.creation(node, collector)
        if creation is None:
            return
        stack = self.batches.single_stack(node, collector, creation)
        if stack is None:
            return
        stack_call, shown, out_axis = stack
        flow = self.batches.dataflow().loop(node)
        if flow.carried or flow.targets_live_out or flow.declared:
            # a value flows between iterations (JF102's scan), or the loop's variable is read after it
            return self.decline(node.iter, "a value flows from one step to the next, or the loop variable is read after the loop: not independent steps")
        function = self.batches.dataflow().enclosing_function(node)
        if isinstance(function, cst.FunctionDef):
            captured = set(block_activity(body_statements(function.body)).captured)
            if captured & {*flow.modified, *flow.targets}:
                return  # a closure reads a name the loop assigns: it would stop seeing the loop's values
        message = (
            f"a loop appending per-element results that are stacked with {shown}: jax.vmap computes them in one "
            "batched call"
        )
        try:
            spec = self._spec(batch)
            reason = next((simple_assignment(st) for st in batch.statements if simple_assignment(st)), None)
            if reason:
                raise Refused(reason)
            if not self.batches.can_define_before(node) and spec.function is not None:
                raise Refused("the loop's block cannot take a local function")
        except Refused as refused:
            if not index_only(batch):
                self.report(node, f"{message}; not rewritten: {refused}")
                return
            return self.decline(node.iter, f"not rewritten: {refused}; not reported: over an index alone this is usually host-side arithmetic")
        if spec.random:
            message += _RANDOM_NOTE
        for evidence in recorded:
            message += "; " + evidence.evidence()
        assign = cst.parse_statement(f"{collector} = {self._vmap_text(spec, out_axis)}\n")
        pieces = [spec.function, assign] if spec.function is not None else [assign]
        moved = [*creation.leading_lines, *node.leading_lines]
        if creation.trailing_whitespace.comment is not None:  # `ys = []  # comment`
            moved.insert(len(creation.leading_lines), cst.EmptyLine(comment=creation.trailing_whitespace.comment))
        pieces = keep_body_comments(node, spec, pieces, moved)
        if node.body.header.comment is not None:  # `for x in xs:  # comment` keeps its comment on the new line
            pieces[-1] = pieces[-1].with_changes(trailing_whitespace=node.body.header)
        fix = self.fix(
            "rewrite the loop of per-element results with jax.vmap",
            [
                (creation, cst.RemovalSentinel.REMOVE),
                (node, cst.FlattenSentinel(pieces)),
                (stack_call, cst.Name(collector)),
            ],
            add_imports=self._imports(),
        )
        self.report(node, message + self._unsafe_note(), fix)

    # ---- loops writing the rows of a fresh buffer ----------------------------------------------------------

    def _row_loop(self, loop: cst.For) -> tuple[str, Fix | None] | None:
        """`out = jnp.zeros((n, d))`, `for i in range(n): out = out.at[i].set(f(xs[i]))`: the finding (message,
        fix) when every row of a fresh buffer is written once from `xs[i]`, None when this is not that loop."""
        if loop.asynchronous is not None or loop.orelse is not None or not isinstance(loop.target, cst.Name):
            return None
        iterable = loop.iter
        if not (isinstance(iterable, cst.Call) and self.batches.builtin(iterable.func, "range") and len(iterable.args) == 1):
            return None
        if iterable.args[0].keyword is not None or iterable.args[0].star:
            return None
        statements = list(body_statements(loop.body))
        index = loop.target.value
        write = single_name_assign(statements[-1]) if statements else None
        value = row_write(write.value, index) if write is not None else None
        if value is None or write.targets[0].target.value != write.value.func.value.value.value.value:
            return None
        out = write.targets[0].target.value
        creation = self.batches.buffer_creation(loop, out)
        if creation is None:
            return None  # not a buffer created fresh just before the loop: not this pattern
        message = (
            f"a loop writing each row of `{out}` from one element of the batch: jax.vmap computes the rows in one "
            "batched call"
        )
        try:
            cast, spec = self._row_loop_plan(loop, statements, index, out, value, creation)
        except Refused as refused:
            return f"{message}; not rewritten: {refused}", None
        except _NotThis:
            return None
        if spec.random:
            message += _RANDOM_NOTE
        vmapped = self._vmap_text(spec, 0)
        line = cst.parse_statement(f"{out} = {vmapped}{f'.astype({cast})' if cast else ''}\n")
        pieces = [spec.function, line] if spec.function is not None else [line]
        moved = [*creation.leading_lines, *loop.leading_lines]
        if creation.trailing_whitespace.comment is not None:
            moved.insert(len(creation.leading_lines), cst.EmptyLine(comment=creation.trailing_whitespace.comment))
        pieces = keep_body_comments(loop, spec, pieces, moved)
        if loop.body.header.comment is not None:
            pieces[-1] = pieces[-1].with_changes(trailing_whitespace=loop.body.header)
        fix = self.fix(
            "rewrite the loop writing rows with jax.vmap",
            [(creation, cst.RemovalSentinel.REMOVE), (loop, cst.FlattenSentinel(pieces))],
            add_imports=self._imports(),
        )
        return message + self._unsafe_note(), fix

    def _unsafe_note(self) -> str:
        """What the fix just built may change in the numbers: rounding, and an index mapped as int32."""
        return _INDEX_NOTE if self._arange_used else _ROUNDING_NOTE

    def _row_loop_plan(self, loop, statements, index, out, value, creation):
        """What proves the rewrite (raises Refused with what is missing, _NotThis where the loop is no batch):
        (the cast of the rows or None, the vmap spec)."""
        symbolic = self.context.shapes.symbolic
        buffer_call = creation.body[0].value
        flow = self.batches.dataflow().loop(loop)
        if flow.declared:
            raise Refused("the loop assigns a global or nonlocal name")
        if flow.targets_live_out:
            raise Refused(f"the index `{index}` is read after the loop")
        if any(n != out for n in flow.carried):
            raise _NotThis()  # state flows from one step to the next: a scan or a fori_loop (JF102, JF101)
        function = self.batches.dataflow().enclosing_function(loop)
        if isinstance(function, cst.FunctionDef):
            captured = set(block_activity(body_statements(function.body)).captured)
            if captured & {*flow.modified, *flow.targets}:
                raise Refused("a closure reads a name the loop assigns")
        before = statements[:-1]
        readers = [n for st in before for n in walk(st) if isinstance(n, cst.Name) and n.value == out]
        readers += [n for n in walk(value) if isinstance(n, cst.Name) and n.value == out]
        if readers:
            raise _NotThis()  # rows computed from the buffer's earlier rows: a scan, not a batch
        if any(out in target_names(t.target) for st in before for n in walk(st) if isinstance(n, cst.Assign) for t in n.targets):
            raise Refused(f"the body assigns `{out}` besides writing its row")
        reason = next((simple_assignment(st) for st in before if simple_assignment(st)), None)
        if reason:
            raise Refused(reason.replace("`.append`", f"row written into `{out}`"))
        # The buffer: fresh, exactly as long as the loop, every row written.
        trip = symbolic.dim(loop.iter.args[0].value, loop)
        buffer = symbolic.fresh(buffer_call, creation, integer=trip)
        if isinstance(buffer, str):
            raise _NotThis()  # `out` starts as something else than a fresh array: not this pattern
        if trip is None or buffer.leading is None or buffer.leading != trip:
            if trip is not None and trip[0] == "const" and buffer.leading is not None and buffer.leading[0] == "const":
                raise _NotThis()  # a buffer filled in part on purpose
            raise Refused(
                f"nothing proves that the loop's `{self.context.code_for(loop.iter.args[0].value)}` steps write "
                f"every row of `{out}` (`{snippet(self.context.code_for(buffer_call))}`)"
            )
        # What the loop maps over: the rows of one array exactly `trip` rows long, read only as `xs[i]`; else
        # the index itself, as `jnp.arange(n)` (the body then reads `xs[i]` with a traced index).
        count = loop.iter.args[0].value
        batch = Batch(value, [index], [Count(self.context.code_for(count))], statements=before)
        parts = (*before, value)
        rows = [s for part in parts for s in walk(part) if self.batches.row_subscript(s, index)]
        uses = [n for part in parts for n in walk(part) if isinstance(n, cst.Name) and n.value == index]
        if not uses:
            raise Refused(f"the rows do not depend on the index `{index}`")
        if self.batches.indexes_containers(index, parts):
            raise _NotThis()  # copying items of Python lists or NumPy arrays into a buffer: host-side, no batch
        if rows and len({r.value.value for r in rows}) == 1 and not self.batches.indexes_other(index, parts, rows[0].value):
            array = rows[0].value
            if (
                array.value not in flow.modified
                and self.batches.is_array(array)
                and trip in symbolic.leading_dims(array.value, loop)
            ):
                batch = Batch(value, [index], [array], index=index, statements=before, count=count)
        for row in rows:
            if row.value.value in flow.modified or row.value.value == out:
                raise Refused(f"the loop assigns `{row.value.value}`, whose rows it reads")
        batch.append = statements[-1]  # the line writing the row: its comments go with the returned value
        spec = self._spec(batch)  # a pure body that batches, using the index only where a tracer can be
        # The rows' shape and dtype: those of a row of the buffer, or a cast to its dtype.
        env: dict = {}
        for statement in before:
            assign = statement.body[0]
            facts = self.batches.row_facts(assign.value, env, loop, index, 0)
            for target in assign.targets:
                for name in target_names(target.target):
                    env[name] = facts if isinstance(target.target, cst.Name) else ([], [])
        shapes, dtypes = self.batches.row_facts(value, env, loop, index, 0)
        if buffer.row != () and (buffer.row is None or not any(same_shape(buffer.row, s) for s in shapes)):
            raise Refused(
                f"nothing proves that `{snippet(self.context.code_for(value))}` has the shape of a row of `{out}` "
                "(`.at[i].set` broadcasts into the row, jax.vmap would stack it as it is)"
            )
        cast = None
        if buffer.dtype is None or buffer.dtype not in dtypes:
            cast = self._cast_text(buffer, loop)
            if cast is None:
                raise Refused(f"nothing proves that the rows have the dtype of `{out}`, and that dtype cannot be written here")
        return cast, spec

    def _cast_text(self, buffer: FreshBuffer, loop: cst.For) -> str | None:
        """The buffer's dtype written so that it means the same where the loop was (`float`, `jnp.int32`,
        `xs.dtype` of an `xs` the loop sees unchanged)."""
        symbolic = self.context.shapes.symbolic
        spelling = buffer.spelling
        if spelling is None:
            return None
        if spelling[0] == "kind":
            return spelling[1]
        if spelling[0] == "dtype-of":
            _, array, key = spelling
            return f"{array.value}.dtype" if key is not None and symbolic.key(array.value, loop) == key else None
        token = buffer.dtype
        if token is None:
            return None
        if token[0] == "dtype-of":
            name = spelling[1].value.value  # `x.dtype`
            return f"{name}.dtype" if symbolic.key(name, loop) == token[1] else None
        return self.context.code_for(spelling[1])

    # ---- planning ------------------------------------------------------------------------------------------

    def _plan(self, node: cst.Call, batch: Batch, out_axis: int):
        """The fix for a comprehension or `map`, and whether the body draws random numbers; raises Refused
        with what stops it."""
        spec = self._spec(batch)
        vmap_call = self._vmap_text(spec, out_axis)
        if spec.function is None:
            return self._replace(node, vmap_call), spec.random
        statement = self.batches.statement(node)
        if statement is None or not self.batches.can_define_before(statement) or self.batches.in_nested_scope(node, statement):
            raise Refused("the element is not a single call, and its statement cannot take a local function before it")
        function = spec.function.with_changes(leading_lines=statement.leading_lines)
        replaced = statement.deep_replace(node, cst.parse_expression(vmap_call)).with_changes(leading_lines=())
        fix = self.fix(
            "rewrite the list of per-element results with jax.vmap",
            [(statement, cst.FlattenSentinel([function, replaced]))],
            add_imports=self._imports(),
        )
        return fix, spec.random

    def _spec(self, batch: Batch) -> "_Spec":
        """What jax.vmap maps: an existing function with each argument's axis, or a new local function."""
        code = self.context.code_for
        self._arange_used = False
        if batch.mapped is not None:
            positions = list(range(len(batch.arrays)))
            random = self.batches.check_function(batch.mapped, positions, arguments=len(batch.arrays))
            self.batches.check_single_result(batch.mapped, positions)
            return _Spec(code(batch.mapped), [0] * len(positions), [self._argument(a) for a in batch.arrays], random)
        element = batch.element
        everything = [*batch.statements, element]
        if any(isinstance(n, cst.NamedExpr) for part in everything for n in walk(part)):
            raise Refused("the element assigns with `:=`")
        rows = self._rows(batch)  # variable → the array it walks (index loops: `xs[i]` → xs)
        single = None if batch.statements else self._single_call(element, batch, rows)
        if single is not None:
            func, axes, arguments = single
            for arg in element.args:
                impurity = self.batches.expression_impurity(arg.value)
                if impurity is not None:
                    raise Refused(f"an argument {impurity}")
            batched = [i for i, axis in enumerate(axes) if axis == 0]
            random = self.batches.check_function(func, batched, arguments=len(axes))
            counted = [a for a in batch.arrays if isinstance(a, Count)]
            if batch.numbered:
                counted.append(Count(self.context.code_for(batch.count)))
            counts = {self._argument(a) for a in counted}
            self.batches.check_single_result(func, [i for i in batched if arguments[i] not in counts])  # an index is no array
            return _Spec(code(func), axes, arguments, random)
        # A named local function for the element.
        params, arrays, statements, element = self._body_parameters(batch, element)
        # The checks read the original code (the rewritten rows `xs[i]` → `x` are new nodes, without the
        # metadata that resolves names): for an index loop the index and the array it reads are the batched
        # values (the array is used only through `xs[i]`, so this taints no more than the rows; it is an array).
        checked = [*batch.statements, batch.element] if batch.index is not None else [*statements, element]
        tainted = {batch.index, batch.arrays[0].value} if batch.index is not None else set(params)
        counted = {v for v, a in zip(batch.variables, batch.arrays) if isinstance(a, Count)}
        rows = {batch.arrays[0].value} if batch.index is not None else set(params) - counted  # an index is no array
        blocker = self.batches.batch_blocker(checked, tainted, 0)
        if blocker is not None:
            raise Refused(blocker)
        arrays_known = frozenset(batched_names(checked, tainted))
        for part in checked:
            purity = self.batches.expression_impurity(part, arrays_known)
            if purity is not None:
                raise Refused(f"the body {purity}")
        if not self.batches.element_is_array(checked[-1], rows):
            raise Refused("the element is not proven to be one JAX array (a tuple would stack differently)")
        random = self.batches.draws_random(checked, 0)
        name = self.context.fresh_names.take("body", "batch_body", "per_element")
        # The statements go in as nodes, not text: their comments and indentation would not parse as a body.
        function = cst.parse_statement(f"def {name}({', '.join(params)}):\n    return {code(element)}\n")
        if statements or batch.append is not None:  # keep the statements' own comments and blank lines
            returned = function.body.body[-1]
            if batch.append is not None:
                returned = returned.with_changes(
                    leading_lines=batch.append.leading_lines, trailing_whitespace=batch.append.trailing_whitespace
                )
            function = function.with_changes(body=function.body.with_changes(body=[*statements, returned]))
        return _Spec(name, [0] * len(arrays), [self._argument(a) for a in arrays], random, function)

    def _vmap_text(self, spec: "_Spec", out_axis: int) -> str:
        vmap, _ = self.context.names.expression_for("jax.vmap")
        in_axes = "" if all(axis == 0 for axis in spec.axes) else f", in_axes={tuple_text(spec.axes)}"
        out_axes = "" if out_axis == 0 else f", out_axes={out_axis}"
        return f"{self.context.code_for(vmap)}({spec.func}{in_axes}{out_axes})({', '.join(spec.arguments)})"

    def _imports(self) -> list:
        _, needed = self.context.names.expression_for("jax.vmap")
        found = [needed] if needed else []
        if self._arange_used:
            _, arange = self.context.names.expression_for("jax.numpy.arange")
            if arange and arange not in found:
                found.append(arange)
        return found

    def _argument(self, array) -> str:
        """The code of what jax.vmap maps: an array, or `jnp.arange(n)` for an index used as a number."""
        if not isinstance(array, Count):
            return self.context.code_for(array)
        arange, _ = self.context.names.expression_for("jax.numpy.arange")
        self._arange_used = True
        return f"{self.context.code_for(arange)}({array.count})"

    def _replace(self, node: cst.Call, call: str):
        return self.fix(
            "rewrite the list of per-element results with jax.vmap",
            [(node, cst.parse_expression(call))],
            add_imports=self._imports(),
        )

    def _rows(self, batch: Batch) -> dict[str, cst.BaseExpression]:
        if batch.index is None:
            return dict(zip(batch.variables, batch.arrays))
        array = batch.arrays[0]
        parts = [*batch.statements, batch.element]
        uses = [n for p in parts for n in walk(p) if isinstance(n, cst.Name) and n.value == batch.index]
        rows = [s for p in parts for s in walk(p) if self.batches.is_row(s, batch.index, array)]
        if len(uses) != len(rows):
            # The index is used as a number too: map it over `jnp.arange(n)`, and read the rows in the body.
            if batch.count is None:
                raise Refused(f"the index `{batch.index}` is used otherwise than as `{self.context.code_for(array)}[{batch.index}]`")
            if rows and not self.batches.indexes_other(batch.index, parts, array):
                batch.numbered = True  # map the rows of `xs` and the index (an empty `xs` stays empty)
                return {batch.index: array}
            batch.arrays = [Count(self.context.code_for(batch.count))]
            batch.index = None
            return {batch.variables[0]: batch.arrays[0]}
        return {batch.index: array}

    def _single_call(self, element, batch: Batch, rows):
        """`f(a, x)`: the function, each argument's axis, and the arguments of the batched call; None when the
        element is not one call whose arguments are either a whole row or free of the loop's variables."""
        if not isinstance(element, cst.Call):
            return None
        variables = set(batch.variables)
        if mentions(element.func, variables):
            return None
        axes, arguments = [], []
        for arg in element.args:
            if arg.keyword is not None or arg.star:
                return None  # jax.vmap maps keyword arguments along axis 0: keep them in a local function
            value = arg.value
            if batch.index is None and isinstance(value, cst.Name) and value.value in variables:
                axes.append(0)
                arguments.append(self._argument(rows[value.value]))
            elif batch.index is not None and self.batches.is_row(value, batch.index, batch.arrays[0]):
                axes.append(0)
                arguments.append(self.context.code_for(batch.arrays[0]))
            elif batch.numbered and isinstance(value, cst.Name) and value.value == batch.index:
                axes.append(0)
                arguments.append(self._argument(Count(self.context.code_for(batch.count))))
            elif mentions(value, variables):
                return None
            else:
                axes.append(None)
                arguments.append(self.context.code_for(value))
        if 0 not in axes:
            raise Refused("the element does not depend on the loop's variable")
        return element.func, axes, arguments

    def _body_parameters(self, batch: Batch, element):
        """Parameters of the local function, the arrays it is mapped over, and its returned expression."""
        if batch.index is None:
            return list(batch.variables), list(batch.arrays), list(batch.statements), element
        array = batch.arrays[0]
        row = self.context.fresh_names.take(*row_names(array.value))
        index, is_row = batch.index, self.batches.is_row

        class Rows(cst.CSTTransformer):
            def leave_Subscript(self, original, updated):
                return cst.Name(row) if is_row(original, index, array) else updated

        params, arrays = [row], [array]
        if batch.numbered:
            params, arrays = [index, row], [Count(self.context.code_for(batch.count)), array]
        return params, arrays, [st.visit(Rows()) for st in batch.statements], element.visit(Rows())
