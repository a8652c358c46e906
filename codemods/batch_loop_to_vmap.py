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

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, Safety
from jaxfix.edit.batch_loop_to_vmap_fix import keep_body_comments
from jaxfix.facts.batches import Function, Plan
from jaxfix.facts.module import FileFacts

_AT = re.compile(r"\.\s*at\b")
_DESCRIPTIONS = {
    "replace": "rewrite the list of per-element results with jax.vmap",
    "define": "rewrite the list of per-element results with jax.vmap",
    "append": "rewrite the loop of per-element results with jax.vmap",
    "rows": "rewrite the loop writing rows with jax.vmap",
}


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
    made. The shape and dtype proofs are JF104's (jaxfix/facts/symbolic.py).

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

    looks_at = ("For", "Call")  # each `for` loop and each stacking call

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each stacking call of a comprehension or map and each loop over the rows of arrays whose steps are
        independent (facts/batches.py decides, in the order of the source), with its fix where jaxfix proves one;
        why the others it recognised got no finding, for `jaxfix explain`."""
        found = []
        for outcome in facts.batches.outcomes():
            if outcome.declined is not None:
                facts.decline(cls.code, outcome.node, outcome.declined)
            elif outcome.plan is None:
                found.append(cls.finding(facts, outcome.node, outcome.message))
            else:
                plan = _FixPlan(outcome.plan, facts)
                description = _DESCRIPTIONS[outcome.plan.form]
                found.append(cls.finding(facts, outcome.node, outcome.message, description=description, plan=plan))
        return found

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The batched call (and the local function) in place of the list or the loop, built on LibCST."""
        plan: Plan = finding.plan.plan
        changes = _Rewrite(plan, bridge).changes()
        if changes is None:
            return None
        return Fix(finding.fix.safety, finding.fix.description, tuple(changes), tuple(plan.imports))


@dataclass(frozen=True)
class _FixPlan:
    plan: Plan  # the decision on `ast` (facts/batches.py)
    facts: FileFacts


class _Rows(cst.CSTTransformer):
    """`array[index]` read as the local function's parameter `row`."""

    def __init__(self, index: str, array: str, row: str) -> None:
        super().__init__()
        self.index, self.array, self.row = index, array, row

    def leave_Subscript(self, original, updated):
        node = original
        if (
            isinstance(node.value, cst.Name)
            and node.value.value == self.array
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Name)
            and node.slice[0].slice.value.value == self.index
        ):
            return cst.Name(self.row)
        return updated


class _Rewrite:
    def __init__(self, plan: Plan, bridge) -> None:
        self.plan = plan
        self.bridge = bridge

    def _function(self, function: Function | None) -> cst.FunctionDef | None:
        """The local function: its statements go in as nodes, not text (their comments and indentation would not
        parse as a body)."""
        if function is None:
            return None
        rows = _Rows(*function.rows) if function.rows is not None else None
        element = self.bridge.required_cst(function.element)
        statements = [self.bridge.required_line(unit[0]) for unit in function.statements]
        if rows is not None:
            element = element.visit(rows)
            statements = [statement.visit(rows) for statement in statements]
        code = self.bridge.module.code_for_node(element)
        made = cst.parse_statement(f"def {function.name}({', '.join(function.params)}):\n    return {code}\n")
        if statements or function.append is not None:  # keep the statements' own comments and blank lines
            returned = made.body.body[-1]
            if function.append is not None:
                append = self.bridge.required_line(function.append[0])
                returned = returned.with_changes(leading_lines=append.leading_lines, trailing_whitespace=append.trailing_whitespace)
            made = made.with_changes(body=made.body.with_changes(body=[*statements, returned]))
        return made

    def changes(self) -> list | None:
        plan = self.plan
        function = self._function(plan.spec.function)
        if plan.form == "replace":
            return [(self.bridge.required_cst(plan.node), cst.parse_expression(plan.vmap_call))]
        if plan.form == "define":
            statement = self.bridge.required_line(plan.statement[0])
            function = function.with_changes(leading_lines=statement.leading_lines)
            call = self.bridge.required_cst(plan.node)
            replaced = statement.deep_replace(call, cst.parse_expression(plan.vmap_call)).with_changes(leading_lines=())
            return [(statement, cst.FlattenSentinel([function, replaced]))]
        loop = self.bridge.required_cst(plan.node)
        creation = self.bridge.required_line(plan.creation)
        cast = f".astype({plan.cast})" if plan.cast else ""
        line = cst.parse_statement(f"{plan.collector} = {plan.vmap_call}{cast}\n")
        pieces = [function, line] if function is not None else [line]
        moved = [*creation.leading_lines, *loop.leading_lines]
        if creation.trailing_whitespace.comment is not None:  # `ys = []  # comment`
            moved.insert(len(creation.leading_lines), cst.EmptyLine(comment=creation.trailing_whitespace.comment))
        pieces = keep_body_comments(loop, plan.spec, pieces, moved)
        if loop.body.header.comment is not None:  # `for x in xs:  # comment` keeps its comment on the new line
            pieces[-1] = pieces[-1].with_changes(trailing_whitespace=loop.body.header)
        changes = [(creation, cst.RemovalSentinel.REMOVE), (loop, cst.FlattenSentinel(pieces))]
        if plan.form == "append":
            changes.append((self.bridge.required_cst(plan.stack_call), cst.Name(plan.collector)))
        return changes
