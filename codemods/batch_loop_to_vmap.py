"""JF301 batch-loop-to-vmap: a list of per-element results stacked into one array
(`jnp.stack([f(a, x) for x in xs])`) becomes `jax.vmap(f, in_axes=(None, 0))(a, xs)`.

Also the loop forms: `ys = []`, `for x in xs: ...; ys.append(e)`, then `jnp.stack(ys)`; and a fresh buffer
written row by row, `out = out.at[i].set(f(xs[i]))`. Their steps are independent: JF102 (loop-to-scan) takes
the loops that carry state (it leaves carry-less loops, and the buffer loops JF301 rewrites, alone), and JF101
leaves loops that append or that JF301 rewrites, so one loop never gets two fixes."""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.arrays import ARRAY_VALUE, CalledArray, RecordedArray, loud_use
from jaxfix.analysis.dataflow import ARRAY_METHODS, Blocker, block_activity, body_statements, returns_one_array
from jaxfix.analysis.metadata import children
from jaxfix.analysis.screen import Screen, array_bindings, dotted, surely_carries
from jaxfix.analysis.shapes import REDUCTION_METHODS, REDUCTIONS, FreshBuffer, same_shape
from jaxfix.analysis.syntax import AT_METHODS, is_docstring, is_number, row_write, target_names, walk
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Fix, Safety
from jaxfix.facts.knowledge.jax import CORE_ARRAY_NAMESPACES, NUMERIC_NAMESPACES

_STACKING = {"jax.numpy.stack": "jnp.stack", "jax.numpy.array": "jnp.array", "jax.numpy.asarray": "jnp.asarray"}
# Library namespaces whose functions batch under jax.vmap exactly as they compute one element.
_BATCHABLE_PREFIXES = NUMERIC_NAMESPACES
# Functions whose result shape depends on the values: each element may give another shape, and under
# jax.vmap they raise (unless given a static `size=`).
_VALUE_SHAPED = frozenset(
    "jax.numpy." + name
    for name in "nonzero argwhere flatnonzero unique unique_values unique_counts compress extract trim_zeros "
    "union1d intersect1d setdiff1d setxor1d".split()
)
_STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size"})
# Arguments that are shapes, sizes or counts (positions, keywords): a batched value there has no single value
# under jax.vmap (`jnp.zeros(i)`, `x.reshape(i, -1)`, `jax.random.normal(key, (i,))`).
_SHAPE_ARGUMENTS = {
    **{"jax.numpy." + n: ((0,), ("shape",)) for n in "zeros ones empty full".split()},
    **{"jax.numpy." + n: ((), ("shape",)) for n in "zeros_like ones_like empty_like full_like".split()},
    "jax.numpy.arange": ((0, 1, 2), ("start", "stop", "step")),
    "jax.numpy.linspace": ((2,), ("num",)),
    "jax.numpy.logspace": ((2,), ("num",)),
    "jax.numpy.eye": ((0, 1, 2), ("N", "M", "k")),
    "jax.numpy.identity": ((0,), ("n",)),
    "jax.numpy.tri": ((0, 1, 2), ("N", "M", "k")),
    "jax.numpy.broadcast_to": ((1,), ("shape",)),
    "jax.numpy.reshape": ((1,), ("newshape", "shape")),
    "jax.numpy.tile": ((1,), ("reps",)),
    "jax.numpy.repeat": ((1,), ("repeats", "total_repeat_length")),
    "jax.numpy.pad": ((1,), ("pad_width",)),
    "jax.numpy.resize": ((1,), ("new_shape",)),
    "jax.numpy.split": ((1,), ("indices_or_sections",)),
    "jax.numpy.tril": ((1,), ("k",)),
    "jax.numpy.triu": ((1,), ("k",)),
}
# jax.random functions and the position of their `shape` (or count) argument; the key (position 0) and the
# parameters before the shape may be batched. Others take a batched value only as their key.
_RANDOM_SHAPE_POSITION = {
    **{n: 1 for n in "normal uniform randint exponential laplace logistic gumbel cauchy rademacher bits split".split()},
    **{n: 2 for n in "bernoulli choice gamma poisson dirichlet t loggamma".split()},
    **{n: 3 for n in "categorical truncated_normal beta".split()},
    "fold_in": None,
}
# Samplers called with positional arguments only: the position of their shape, their number of arguments,
# and the kind of their default dtype (the array they return has that shape and dtype).
_RANDOM_SAMPLERS = {
    **{"jax.random." + n: (1, 2, "float") for n in "normal uniform exponential laplace logistic gumbel cauchy".split()},
    "jax.random.bernoulli": (2, 3, "bool"),
    "jax.random.randint": (1, 4, "int"),
}
_SHAPE_METHODS = frozenset({"reshape", "repeat", "broadcast_to"})
_CONCRETE_BUILTINS = frozenset({"int", "float", "bool", "complex", "len", "range", "list", "tuple", "str", "repr",
                                "print", "iter", "next", "sorted", "set", "dict", "enumerate", "zip", "map",
                                "filter", "round", "divmod", "hash", "format", "min", "max", "sum", "any", "all"})  # fmt: skip
_CONCRETE_METHODS = frozenset({"item", "tolist", "__index__", "__bool__", "__int__", "__float__"})
_BUILTINS = frozenset(dir(builtins))
_AT = re.compile(r"\.\s*at\b")
_MAX_DEPTH = 4  # how deep same-module calls are followed
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
_SHORT = 10  # `range(k)` with a literal k under this stays a Python loop (as JF101 and JF102 leave it)
# Reductions that return a 0-d array when given one array and nothing else.
_WHOLE_REDUCTIONS = REDUCTIONS - {"jax.numpy.trace", "jax.numpy.logaddexp.reduce", "jax.numpy.vdot"}


class _Refused(Exception):
    """What stops the rewrite, in words for the diagnostic."""


class _NotThis(Exception):
    """Not this rule's pattern after all: no finding."""


@dataclass(frozen=True)
class _Count:
    """`jnp.arange(count)`: what an index variable used as a number is mapped over (`count` is code)."""

    count: str


@dataclass
class _Batch:
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
    made. The shape and dtype proofs are shared with JF104 (jaxfix/analysis/shapes.py, `SymbolicShapes`).

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
        """A finding needs one of the three forms, each with the conditions the matcher checks first:
        - `for i in range(n):` whose last statement is `out = out.at[i].set(v)`, after an `out = <call>` in the
          same block (`_row_loop`, `_buffer_creation`);
        - a `jnp.stack`/`jnp.array`/`jnp.asarray` call (through any import; no argument but `axis=k`) of a list
          comprehension with one `for` and no `if`, or of `list(map(f, xs, ...))` (`_batch`);
        - such a call of a list `ys` made empty by the statement just before a `for` loop that ends with
          `ys.append(e)` (`_creation`) and does not surely carry a value between steps (`screen.surely_carries`);
        where what the comprehension, map or loop walks may be an array (`_is_array`): see `_may_walk_arrays`."""
        imports = screen.imports
        stacks, rows, appends = [], False, False
        for node in screen.nodes_of(ast.Call):  # first the forms alone, cheaply
            func = node.func
            attribute = type(func) is ast.Attribute and func.attr in _STACKING_NAMES
            if node.args and (attribute or type(func) is ast.Name and func.id in imports):
                stacks.append(node)
        for node in screen.nodes_of(ast.For):
            if not node.orelse:
                rows = rows or _row_loop_form(node, node.body[-1])
                appends = appends or _appends_to(node.body[-1]) is not None
        stacks = [n for n in stacks if screen.may_resolve_to(n.func, _STACKING) and _stack_axis_form(n)]
        if not stacks and not rows:
            return False
        walks = _Walks(screen)
        appended = set()
        if rows or appends and any(isinstance(n.args[0], ast.Name) for n in stacks):
            for block in _statement_blocks(screen):
                for before, statement in zip([None, *block], block):
                    if type(statement) is not ast.For or statement.orelse:
                        continue
                    last = statement.body[-1]
                    if _row_loop_form(statement, last) and any(
                        _assigns_call(earlier, last.targets[0].id) for earlier in block[: block.index(statement)]
                    ):
                        return True
                    collector = _appends_to(last)
                    if collector is not None and _empties(before, collector):
                        element = [*statement.body[:-1], last.value.args[0]]  # `_loop_batch`'s statements, element
                        if not surely_carries(screen, statement) and walks.batch(statement.target, statement.iter, element):
                            appended.add(collector)
        for node in stacks:
            first = node.args[0]
            if isinstance(first, ast.Name):
                if first.id in appended:
                    return True
            elif isinstance(first, ast.ListComp):
                (generator, *more) = first.generators
                if not more and not generator.ifs and not generator.is_async:
                    if walks.batch(generator.target, generator.iter, [first.elt]):
                        return True
            elif _is_list_of_map(first) and all(walks.array(array) for array in _mapped(first).args[1:]):
                return True
        return False

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


    # ---- matching ------------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.context.names.callee(node)
        if callee not in _STACKING or not node.args:
            return
        first = node.args[0]
        out_axis = _stack_axis(node, callee)
        if first.keyword is not None or first.star or out_axis is None:
            return
        batch = self._batch(first.value)
        if batch is None:
            return
        assumed = self._assumed_rows(batch)
        if assumed is None:
            return  # NumPy data, a Python list, a pytree: not a batch jaxfix can prove
        shown = _STACKING[callee]
        walked = "an index" if all(isinstance(a, _Count) for a in batch.arrays) else "the rows of an array"
        message = f"{shown} of per-element results over {walked}: jax.vmap computes them in one batched call"
        try:
            fix, random = self._plan(node, batch, out_axis)
        except _Refused as refused:
            if not _index_only(batch):
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
                f"and `{_snippet(self.context.code_for(use))}` raises at trace time)"
            )
        self.report(node, message + self._unsafe_note(), fix)

    def _assumed_rows(self, batch: "_Batch") -> tuple | RecordedArray | CalledArray | None:
        """(name, why, use) when the one array a comprehension walks is not proven to be an array but is a
        non-static argument of a traced function or a library call's output that is one array by convention (a
        Flax module's `apply`), and the element uses the variable in a way that raises on a tuple, list or dict
        (where jax.vmap would map a pytree's leaves, the comprehension its elements); ("", None, None) when
        every array is proven; else what a recorded run saw, where it saw an array there in every call (a tuple
        would compute other values: the fix says it rests on the record); None when none of these."""
        if all(isinstance(array, _Count) or self._is_array(array) for array in batch.arrays):
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

    def visit_For(self, node: cst.For) -> None:
        """`ys = []`, `for x in xs: ...; ys.append(e)`, then `jnp.stack(ys)`: the loop form, when nothing
        flows from one element to the next (a loop that carries state is JF102's)."""
        if node.asynchronous is not None or node.orelse is not None:
            return
        statements = list(body_statements(node.body))
        if not statements:
            return
        appended = _append_of(statements[-1])
        if appended is None:
            finding = self._row_loop(node)
            if finding is not None:
                self.report(node, *finding)
            return
        collector, element = appended
        batch = self._loop_batch(node, element, statements[:-1])
        if batch is not None:
            batch.append = statements[-1]
        if batch is None:
            return
        # Each array the loop walks is proven one, or a recorded run or every call in the project passed one there.
        unproven = [a for a in batch.arrays if not (isinstance(a, _Count) or self._is_array(a))]
        recorded = [self.context.arrays.argument_evidence(a) for a in unproven]
        if None in recorded:
            return
        creation = self._creation(node, collector)
        if creation is None:
            return
        stack = self._single_stack(node, collector, creation)
        if stack is None:
            return
        stack_call, shown, out_axis = stack
        flow = self._dataflow().loop(node)
        if flow.carried or flow.targets_live_out or flow.declared:
            # a value flows between iterations (JF102's scan), or the loop's variable is read after it
            return self.decline(node.iter, "a value flows from one step to the next, or the loop variable is read after the loop: not independent steps")
        function = self._dataflow().enclosing_function(node)
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
            reason = next((_simple_assignment(st) for st in batch.statements if _simple_assignment(st)), None)
            if reason:
                raise _Refused(reason)
            if not self._can_define_before(node) and spec.function is not None:
                raise _Refused("the loop's block cannot take a local function")
        except _Refused as refused:
            if not _index_only(batch):
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
        pieces = _keep_body_comments(node, spec, pieces, moved)
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
        if not (isinstance(iterable, cst.Call) and self._builtin(iterable.func, "range") and len(iterable.args) == 1):
            return None
        if iterable.args[0].keyword is not None or iterable.args[0].star:
            return None
        statements = list(body_statements(loop.body))
        index = loop.target.value
        write = _single_name_assign(statements[-1]) if statements else None
        value = row_write(write.value, index) if write is not None else None
        if value is None or write.targets[0].target.value != write.value.func.value.value.value.value:
            return None
        out = write.targets[0].target.value
        creation = self._buffer_creation(loop, out)
        if creation is None:
            return None  # not a buffer created fresh just before the loop: not this pattern
        message = (
            f"a loop writing each row of `{out}` from one element of the batch: jax.vmap computes the rows in one "
            "batched call"
        )
        try:
            cast, spec = self._row_loop_plan(loop, statements, index, out, value, creation)
        except _Refused as refused:
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
        pieces = _keep_body_comments(loop, spec, pieces, moved)
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

    def _buffer_creation(self, loop: cst.For, out: str) -> cst.SimpleStatementLine | None:
        """The `out = <call>` line before the loop in its block, with nothing in between mentioning `out`."""
        parent = self.context.parents.get(loop)
        siblings = list(getattr(parent, "body", ()))
        position = next((i for i, st in enumerate(siblings) if st is loop), None)
        if not position:
            return None
        for before in reversed(siblings[:position]):
            if not _mentions(before, {out}):
                continue
            assign = _single_name_assign(before)
            if assign is None or assign.targets[0].target.value != out or not isinstance(assign.value, cst.Call):
                return None
            return before
        return None

    def _row_loop_plan(self, loop, statements, index, out, value, creation):
        """What proves the rewrite (raises _Refused with what is missing, _NotThis where the loop is no batch):
        (the cast of the rows or None, the vmap spec)."""
        symbolic = self.context.shapes.symbolic
        buffer_call = creation.body[0].value
        flow = self._dataflow().loop(loop)
        if flow.declared:
            raise _Refused("the loop assigns a global or nonlocal name")
        if flow.targets_live_out:
            raise _Refused(f"the index `{index}` is read after the loop")
        if any(n != out for n in flow.carried):
            raise _NotThis()  # state flows from one step to the next: a scan or a fori_loop (JF102, JF101)
        function = self._dataflow().enclosing_function(loop)
        if isinstance(function, cst.FunctionDef):
            captured = set(block_activity(body_statements(function.body)).captured)
            if captured & {*flow.modified, *flow.targets}:
                raise _Refused("a closure reads a name the loop assigns")
        before = statements[:-1]
        readers = [n for st in before for n in walk(st) if isinstance(n, cst.Name) and n.value == out]
        readers += [n for n in walk(value) if isinstance(n, cst.Name) and n.value == out]
        if readers:
            raise _NotThis()  # rows computed from the buffer's earlier rows: a scan, not a batch
        if any(out in target_names(t.target) for st in before for n in walk(st) if isinstance(n, cst.Assign) for t in n.targets):
            raise _Refused(f"the body assigns `{out}` besides writing its row")
        reason = next((_simple_assignment(st) for st in before if _simple_assignment(st)), None)
        if reason:
            raise _Refused(reason.replace("`.append`", f"row written into `{out}`"))
        # The buffer: fresh, exactly as long as the loop, every row written.
        trip = symbolic.dim(loop.iter.args[0].value, loop)
        buffer = symbolic.fresh(buffer_call, creation, integer=trip)
        if isinstance(buffer, str):
            raise _NotThis()  # `out` starts as something else than a fresh array: not this pattern
        if trip is None or buffer.leading is None or buffer.leading != trip:
            if trip is not None and trip[0] == "const" and buffer.leading is not None and buffer.leading[0] == "const":
                raise _NotThis()  # a buffer filled in part on purpose
            raise _Refused(
                f"nothing proves that the loop's `{self.context.code_for(loop.iter.args[0].value)}` steps write "
                f"every row of `{out}` (`{_snippet(self.context.code_for(buffer_call))}`)"
            )
        # What the loop maps over: the rows of one array exactly `trip` rows long, read only as `xs[i]`; else
        # the index itself, as `jnp.arange(n)` (the body then reads `xs[i]` with a traced index).
        count = loop.iter.args[0].value
        batch = _Batch(value, [index], [_Count(self.context.code_for(count))], statements=before)
        parts = (*before, value)
        rows = [s for part in parts for s in walk(part) if self._row_subscript(s, index)]
        uses = [n for part in parts for n in walk(part) if isinstance(n, cst.Name) and n.value == index]
        if not uses:
            raise _Refused(f"the rows do not depend on the index `{index}`")
        if self._indexes_containers(index, parts):
            raise _NotThis()  # copying items of Python lists or NumPy arrays into a buffer: host-side, no batch
        if rows and len({r.value.value for r in rows}) == 1 and not self._indexes_other(index, parts, rows[0].value):
            array = rows[0].value
            if (
                array.value not in flow.modified
                and self._is_array(array)
                and trip in symbolic.leading_dims(array.value, loop)
            ):
                batch = _Batch(value, [index], [array], index=index, statements=before, count=count)
        for row in rows:
            if row.value.value in flow.modified or row.value.value == out:
                raise _Refused(f"the loop assigns `{row.value.value}`, whose rows it reads")
        batch.append = statements[-1]  # the line writing the row: its comments go with the returned value
        spec = self._spec(batch)  # a pure body that batches, using the index only where a tracer can be
        # The rows' shape and dtype: those of a row of the buffer, or a cast to its dtype.
        env: dict = {}
        for statement in before:
            assign = statement.body[0]
            facts = self._row_facts(assign.value, env, loop, index, 0)
            for target in assign.targets:
                for name in target_names(target.target):
                    env[name] = facts if isinstance(target.target, cst.Name) else ([], [])
        shapes, dtypes = self._row_facts(value, env, loop, index, 0)
        if buffer.row != () and (buffer.row is None or not any(same_shape(buffer.row, s) for s in shapes)):
            raise _Refused(
                f"nothing proves that `{_snippet(self.context.code_for(value))}` has the shape of a row of `{out}` "
                "(`.at[i].set` broadcasts into the row, jax.vmap would stack it as it is)"
            )
        cast = None
        if buffer.dtype is None or buffer.dtype not in dtypes:
            cast = self._cast_text(buffer, loop)
            if cast is None:
                raise _Refused(f"nothing proves that the rows have the dtype of `{out}`, and that dtype cannot be written here")
        return cast, spec

    def _row_subscript(self, node: cst.CSTNode, index: str) -> bool:
        return (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Name)
            and node.slice[0].slice.value.value == index
        )

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

    def _row_facts(self, expr, env: dict, loop: cst.For | None, index: str | None, depth: int) -> tuple[list, list]:
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
            if loop is not None and expr.value != index and expr.value not in self._dataflow().loop(loop).modified:
                key = symbolic.key(expr.value, loop)
                if key is not None:
                    return [(("spread", key, 0),)], [("dtype-of", key)]
            return [], []
        if isinstance(expr, cst.Subscript):
            if loop is not None and self._row_subscript(expr, index) and expr.value.value not in env:
                key = symbolic.key(expr.value.value, loop)
                if key is not None:
                    return [(("spread", key, 1),)], [("dtype-of", key)]
            return [], []
        if isinstance(expr, cst.Call) and not any(a.star or a.keyword is not None for a in expr.args):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in REDUCTION_METHODS and not expr.args:
                if self.context.names.qualified(func) is None:
                    return [()], []  # `x.sum()`: a 0-d array
            if self.context.names.callee(expr) in _WHOLE_REDUCTIONS and len(expr.args) == 1:
                return [()], []
            definition = self._dataflow().local_function(func) if isinstance(func, cst.Name) else None
            if definition is not None:
                return self._call_facts(definition, expr, env, loop, index, depth)
            callee = self.context.names.callee(expr)
            sampler = _RANDOM_SAMPLERS.get(callee)
            if sampler is not None and len(expr.args) == sampler[1]:
                # `jax.random.normal(key, shape)`: that shape, the default dtype of its kind.
                shape, kind = expr.args[sampler[0]].value, ("default", sampler[2])
                if isinstance(shape, cst.Attribute) and shape.attr.value == "shape" and isinstance(shape.value, cst.Name):
                    if shape.value.value in env:
                        return [s for s in env[shape.value.value][0] if s != ()], [kind]
                if loop is not None and not _mentions(shape, set(env) | {index}):
                    parts = symbolic.shape_parts(shape, loop)
                    return ([parts] if parts is not None else []), [kind]
                return [], [kind]

        def astype_dtype(dtype):
            token = symbolic.dtype_token(dtype, loop) if loop is not None else None
            if token is None and loop is None:
                token = symbolic.dtype_token(dtype, self._statement(dtype) or dtype)
            if token is None or (token[0] == "dtype-of" and (loop is None or _mentions(dtype, set(env)))):
                return None
            return token

        facts = symbolic.elementwise_facts(expr, lambda e: self._row_facts(e, env, loop, index, depth + 1), astype_dtype)
        return facts if facts is not None else ([], [])

    def _call_facts(self, definition, call: cst.Call, env, loop, index, depth) -> tuple[list, list]:
        """Facts of what a same-module function returns, from its arguments' facts: a lambda, or a `def` of
        `name = value` lines and one final `return`."""
        params = definition.params
        if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None or params.kwonly_params:
            return [], []
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        if len(positional) != len(call.args):
            return [], []
        inner = {name: self._row_facts(a.value, env, loop, index, depth + 1) for name, a in zip(positional, call.args)}
        if isinstance(definition, cst.Lambda):
            return self._row_facts(definition.body, inner, None, None, depth + 1)
        body = list(body_statements(definition.body))
        if body and is_docstring(body[0]):
            body = body[1:]
        for statement in body[:-1]:
            assign = _single_name_assign(statement)
            if assign is None:
                return [], []
            inner[assign.targets[0].target.value] = self._row_facts(assign.value, inner, None, None, depth + 1)
        last = body[-1] if body else None
        small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
        if not isinstance(small, cst.Return) or small.value is None:
            return [], []
        return self._row_facts(small.value, inner, None, None, depth + 1)

    def _loop_batch(self, loop: cst.For, element, statements) -> _Batch | None:
        return self._iteration(loop.target, loop.iter, element, statements)

    def _iteration(self, target, iterable, element, statements=()) -> _Batch | None:
        """What a `for` clause walks: the rows of arrays (`x in xs`, `zip`), an index (`range(len(xs))` read as
        `xs[i]`), a number (`range(n)`), or both (`enumerate(xs)`)."""
        statements = list(statements)
        if isinstance(target, cst.Name):
            index_array = self._index_range(iterable)
            if index_array is not None:
                return _Batch(element, [target.value], [index_array], index=target.value, statements=statements,
                              count=iterable.args[0].value)  # fmt: skip
            count = self._range_count(iterable)
            if count is not None:
                if self._indexes_containers(target.value, [*statements, element]):
                    return None  # gathering items of Python lists (`results[i][k]`): host-side plumbing, no batch
                return _Batch(element, [target.value], [_Count(self.context.code_for(count))], statements=statements)
            return _Batch(element, [target.value], [iterable], statements=statements)
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(iterable, cst.Call):
            return None
        elements = [e.value for e in target.elements]
        if not all(isinstance(e, cst.Name) for e in elements) or any(isinstance(e, cst.StarredElement) for e in target.elements):
            return None
        args = iterable.args
        if any(a.keyword is not None or a.star for a in args):
            return None
        if self._builtin(iterable.func, "zip") and len(args) == len(elements):
            return _Batch(element, [e.value for e in elements], [a.value for a in args], statements=statements)
        if self._builtin(iterable.func, "enumerate") and len(args) == 1 and len(elements) == 2:
            array = args[0].value
            if not isinstance(array, cst.Name):
                return None
            count = _Count(f"len({array.value})")
            return _Batch(element, [e.value for e in elements], [count, array], statements=statements)
        return None

    def _indexes_other(self, index: str, parts, array: cst.Name) -> bool:
        """Whether the index subscripts anything else than `array[index]`."""
        return any(
            isinstance(node, cst.Subscript)
            and any(_mentions(element, {index}) for element in node.slice)
            and not self._is_row(node, index, array)
            for part in parts
            for node in walk(part)
        )

    def _indexes_containers(self, index: str, parts) -> bool:
        """Whether the index subscripts a name not proven to hold a JAX array (a list, a dict, a tuple)."""
        for part in parts:
            for node in walk(part):
                if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and any(
                    _mentions(element, {index}) for element in node.slice
                ):
                    if not self._is_array(node.value):
                        return True
        return False

    def _range_count(self, iterable) -> cst.BaseExpression | None:
        """`n` of `range(n)` (one argument), unless a literal under 10: a short loop stays a loop (as JF101)."""
        if not (isinstance(iterable, cst.Call) and self._builtin(iterable.func, "range") and len(iterable.args) == 1):
            return None
        arg = iterable.args[0]
        if arg.keyword is not None or arg.star:
            return None
        if isinstance(arg.value, cst.Integer) and int(arg.value.evaluated_value) < _SHORT:
            return None
        return arg.value

    def _creation(self, loop: cst.For, collector: str) -> cst.SimpleStatementLine | None:
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

    def _single_stack(self, loop: cst.For, collector: str, creation: cst.SimpleStatementLine):
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
            if callee not in _STACKING:
                return None
            axis = _stack_axis(call, callee)
            if axis is None or not self._after(call, loop):
                return None
            found = (call, _STACKING[callee], axis)
        return found

    def _after(self, node: cst.CSTNode, loop: cst.For) -> bool:
        """Whether `node` is in a statement that follows the loop in the loop's own block."""
        parents = self.context.parents
        block = parents.get(loop)
        current = node
        while current is not None and parents.get(current) is not block:
            current = parents.get(current)
        siblings = list(getattr(block, "body", ()))
        return current is not None and current in siblings and siblings.index(current) > siblings.index(loop)

    def _batch(self, value: cst.BaseExpression) -> _Batch | None:
        """The comprehension or `list(map(...))` passed to the stacking call, when it has a shape we handle."""
        if isinstance(value, cst.Call) and self._builtin(value.func, "list") and len(value.args) == 1:
            inner = value.args[0].value
            if not (isinstance(inner, cst.Call) and self._builtin(inner.func, "map")) or len(inner.args) < 2:
                return None
            if any(a.keyword is not None or a.star for a in inner.args):
                return None
            return _Batch(None, [], [a.value for a in inner.args[1:]], mapped=inner.args[0].value)
        if not isinstance(value, cst.ListComp):
            return None
        comp = value.for_in
        if comp.inner_for_in is not None or comp.ifs or comp.asynchronous is not None:
            return None
        return self._iteration(comp.target, comp.iter, value.elt)

    def _index_range(self, iterable: cst.BaseExpression) -> cst.BaseExpression | None:
        """`xs` of `range(len(xs))` or `range(xs.shape[0])`."""
        if not (isinstance(iterable, cst.Call) and self._builtin(iterable.func, "range") and len(iterable.args) == 1):
            return None
        bound = iterable.args[0]
        if bound.keyword is not None or bound.star:
            return None
        value = bound.value
        if isinstance(value, cst.Call) and self._builtin(value.func, "len") and len(value.args) == 1:
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

    # ---- planning ------------------------------------------------------------------------------------------

    def _plan(self, node: cst.Call, batch: _Batch, out_axis: int):
        """The fix for a comprehension or `map`, and whether the body draws random numbers; raises _Refused
        with what stops it."""
        spec = self._spec(batch)
        vmap_call = self._vmap_text(spec, out_axis)
        if spec.function is None:
            return self._replace(node, vmap_call), spec.random
        statement = self._statement(node)
        if statement is None or not self._can_define_before(statement) or self._in_nested_scope(node, statement):
            raise _Refused("the element is not a single call, and its statement cannot take a local function before it")
        function = spec.function.with_changes(leading_lines=statement.leading_lines)
        replaced = statement.deep_replace(node, cst.parse_expression(vmap_call)).with_changes(leading_lines=())
        fix = self.fix(
            "rewrite the list of per-element results with jax.vmap",
            [(statement, cst.FlattenSentinel([function, replaced]))],
            add_imports=self._imports(),
        )
        return fix, spec.random

    def _spec(self, batch: _Batch) -> "_Spec":
        """What jax.vmap maps: an existing function with each argument's axis, or a new local function."""
        code = self.context.code_for
        self._arange_used = False
        if batch.mapped is not None:
            positions = list(range(len(batch.arrays)))
            random = self._check_function(batch.mapped, positions, arguments=len(batch.arrays))
            self._check_single_result(batch.mapped, positions)
            return _Spec(code(batch.mapped), [0] * len(positions), [self._argument(a) for a in batch.arrays], random)
        element = batch.element
        everything = [*batch.statements, element]
        if any(isinstance(n, cst.NamedExpr) for part in everything for n in walk(part)):
            raise _Refused("the element assigns with `:=`")
        rows = self._rows(batch)  # variable → the array it walks (index loops: `xs[i]` → xs)
        single = None if batch.statements else self._single_call(element, batch, rows)
        if single is not None:
            func, axes, arguments = single
            for arg in element.args:
                impurity = self._expression_impurity(arg.value)
                if impurity is not None:
                    raise _Refused(f"an argument {impurity}")
            batched = [i for i, axis in enumerate(axes) if axis == 0]
            random = self._check_function(func, batched, arguments=len(axes))
            counted = [a for a in batch.arrays if isinstance(a, _Count)]
            if batch.numbered:
                counted.append(_Count(self.context.code_for(batch.count)))
            counts = {self._argument(a) for a in counted}
            self._check_single_result(func, [i for i in batched if arguments[i] not in counts])  # an index is no array
            return _Spec(code(func), axes, arguments, random)
        # A named local function for the element.
        params, arrays, statements, element = self._body_parameters(batch, element)
        # The checks read the original code (the rewritten rows `xs[i]` → `x` are new nodes, without the
        # metadata that resolves names): for an index loop the index and the array it reads are the batched
        # values (the array is used only through `xs[i]`, so this taints no more than the rows; it is an array).
        checked = [*batch.statements, batch.element] if batch.index is not None else [*statements, element]
        tainted = {batch.index, batch.arrays[0].value} if batch.index is not None else set(params)
        counted = {v for v, a in zip(batch.variables, batch.arrays) if isinstance(a, _Count)}
        rows = {batch.arrays[0].value} if batch.index is not None else set(params) - counted  # an index is no array
        blocker = self._batch_blocker(checked, tainted, 0)
        if blocker is not None:
            raise _Refused(blocker)
        arrays_known = frozenset(_batched_names(checked, tainted))
        for part in checked:
            purity = self._expression_impurity(part, arrays_known)
            if purity is not None:
                raise _Refused(f"the body {purity}")
        if not self._element_is_array(checked[-1], rows):
            raise _Refused("the element is not proven to be one JAX array (a tuple would stack differently)")
        random = self._draws_random(checked, 0)
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
        in_axes = "" if all(axis == 0 for axis in spec.axes) else f", in_axes={_tuple_text(spec.axes)}"
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
        if not isinstance(array, _Count):
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

    def _rows(self, batch: _Batch) -> dict[str, cst.BaseExpression]:
        if batch.index is None:
            return dict(zip(batch.variables, batch.arrays))
        array = batch.arrays[0]
        parts = [*batch.statements, batch.element]
        uses = [n for p in parts for n in walk(p) if isinstance(n, cst.Name) and n.value == batch.index]
        rows = [s for p in parts for s in walk(p) if self._is_row(s, batch.index, array)]
        if len(uses) != len(rows):
            # The index is used as a number too: map it over `jnp.arange(n)`, and read the rows in the body.
            if batch.count is None:
                raise _Refused(f"the index `{batch.index}` is used otherwise than as `{self.context.code_for(array)}[{batch.index}]`")
            if rows and not self._indexes_other(batch.index, parts, array):
                batch.numbered = True  # map the rows of `xs` and the index (an empty `xs` stays empty)
                return {batch.index: array}
            batch.arrays = [_Count(self.context.code_for(batch.count))]
            batch.index = None
            return {batch.variables[0]: batch.arrays[0]}
        return {batch.index: array}

    @staticmethod
    def _is_row(node: cst.CSTNode, index: str, array: cst.BaseExpression) -> bool:
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

    def _single_call(self, element, batch: _Batch, rows):
        """`f(a, x)`: the function, each argument's axis, and the arguments of the batched call; None when the
        element is not one call whose arguments are either a whole row or free of the loop's variables."""
        if not isinstance(element, cst.Call):
            return None
        variables = set(batch.variables)
        if _mentions(element.func, variables):
            return None
        axes, arguments = [], []
        for arg in element.args:
            if arg.keyword is not None or arg.star:
                return None  # jax.vmap maps keyword arguments along axis 0: keep them in a local function
            value = arg.value
            if batch.index is None and isinstance(value, cst.Name) and value.value in variables:
                axes.append(0)
                arguments.append(self._argument(rows[value.value]))
            elif batch.index is not None and self._is_row(value, batch.index, batch.arrays[0]):
                axes.append(0)
                arguments.append(self.context.code_for(batch.arrays[0]))
            elif batch.numbered and isinstance(value, cst.Name) and value.value == batch.index:
                axes.append(0)
                arguments.append(self._argument(_Count(self.context.code_for(batch.count))))
            elif _mentions(value, variables):
                return None
            else:
                axes.append(None)
                arguments.append(self.context.code_for(value))
        if 0 not in axes:
            raise _Refused("the element does not depend on the loop's variable")
        return element.func, axes, arguments

    def _body_parameters(self, batch: _Batch, element):
        """Parameters of the local function, the arrays it is mapped over, and its returned expression."""
        if batch.index is None:
            return list(batch.variables), list(batch.arrays), list(batch.statements), element
        array = batch.arrays[0]
        row = self.context.fresh_names.take(*_row_names(array.value))
        index, is_row = batch.index, self._is_row

        class Rows(cst.CSTTransformer):
            def leave_Subscript(self, original, updated):
                return cst.Name(row) if is_row(original, index, array) else updated

        params, arrays = [row], [array]
        if batch.numbered:
            params, arrays = [index, row], [_Count(self.context.code_for(batch.count)), array]
        return params, arrays, [st.visit(Rows()) for st in batch.statements], element.visit(Rows())

    # ---- what the batched function may do ------------------------------------------------------------------

    def _check_function(self, func: cst.BaseExpression, batched: Sequence[int], arguments: int | None = None) -> bool:
        """Raises _Refused unless `func` is a function jax.vmap batches as the loop computes it: a JAX library
        function, a lambda, or a pure same-module function with no Python control flow on its batched
        parameters. Returns whether it draws random numbers."""
        qualified = self.context.names.qualified(func)
        if qualified is not None:
            if qualified in _VALUE_SHAPED:
                raise _Refused(f"`{qualified}` returns an array whose shape depends on the values")
            if qualified.startswith(_BATCHABLE_PREFIXES):
                probe = cst.Call(func, [cst.Arg(cst.Name("_batched_") if i in batched else cst.Name("_")) for i in range(arguments or 0)])
                if self._batched_shape(qualified, probe, {"_batched_"}):
                    raise _Refused(f"`{qualified}` would take a batched value as a shape or a count")
                return qualified.startswith("jax.random.")
            raise _Refused(f"it calls `{qualified}`, which is not known to be pure and to batch under jax.vmap")
        definition = None
        if isinstance(func, cst.Lambda):
            definition = func
        elif isinstance(func, cst.Name):
            found = self._dataflow().local_function(func)
            definition = found
        if definition is None:
            raise _Refused(f"it calls `{self.context.code_for(func)}`, which is not known to be pure")
        params = definition.params
        if isinstance(params.star_arg, cst.Param) or isinstance(params.star_kwarg, cst.Param):
            raise _Refused(f"`{self.context.code_for(func)}` takes *args or **kwargs")
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        if arguments is not None and arguments > len(positional):
            raise _Refused(f"`{self.context.code_for(func)}` takes fewer arguments than it is given")
        tainted = {positional[i] for i in batched if i < len(positional)}
        body = [definition.body] if isinstance(definition, cst.Lambda) else list(body_statements(definition.body))
        blocker = self._batch_blocker(body, tainted, 0)
        if blocker is not None:
            raise _Refused(f"`{self.context.code_for(func)}` {blocker}")
        arrays = frozenset(_batched_names(body, tainted))  # rows of a JAX array and what is computed from them
        impurity = self._dataflow().function_impurity(definition, arrays=arrays)
        if impurity is not None:
            raise _Refused(f"`{self.context.code_for(func)}` {impurity.reason}")
        return self._draws_random(body, 0)

    def _check_single_result(self, func: cst.BaseExpression, batched: Sequence[int]) -> None:
        """The function must return one array: a tuple would stack into one array but vmap returns a tuple."""
        qualified = self.context.names.qualified(func)
        if qualified is not None:
            if not returns_one_array(qualified):
                raise _Refused(f"`{qualified}` is not known to return one array (a tuple would stack differently)")
            return
        definition = func if isinstance(func, cst.Lambda) else self._dataflow().local_function(func)
        positional = [p.name.value for p in (*definition.params.posonly_params, *definition.params.params)]
        if isinstance(definition, cst.Lambda):
            values = [definition.body]
        else:
            values = [n.value for n in _walk_own(definition.body) if isinstance(n, cst.Return)]
        # The batched parameters are rows of JAX arrays; names computed from them are followed to their values.
        rows = {positional[i] for i in batched if i < len(positional)}
        if not values or not all(v is not None and self._element_is_array(v, rows) for v in values):
            raise _Refused(
                f"`{self.context.code_for(func)}` is not proven to return one JAX array (a tuple would stack differently)"
            )

    def _element_is_array(self, expr: cst.BaseExpression, rows: set[str]) -> bool:
        """Whether the element surely is one JAX array (not a tuple, which jnp.stack and jax.vmap treat
        differently): jaxfix.analysis.arrays.value_kinds, where `rows` hold arrays and a same-module function
        returning one counts."""
        at = self.context.shapes.symbolic.statement(expr) or expr
        kinds = self.context.arrays.value_kinds(expr, at, frozenset(rows), calls=self._returns_array)
        return kinds == {ARRAY_VALUE}

    def _returns_array(self, value: cst.BaseExpression) -> bool:
        if self._dataflow().is_array_like(value):
            return True
        if isinstance(value, cst.Call):  # a same-module function returning an array
            definition = self._dataflow().local_function(value.func) if isinstance(value.func, cst.Name) else None
            if isinstance(definition, cst.FunctionDef):
                returns = [n.value for n in _walk_own(definition.body) if isinstance(n, cst.Return)]
                return bool(returns) and all(
                    r is not None and self._dataflow().is_array_like(r) for r in returns
                )
        return False

    def _batch_blocker(self, statements: Sequence[cst.CSTNode], tainted: set[str], depth: int) -> str | None:
        """What in `statements` fails or computes otherwise once the `tainted` names are batched tracers:
        Python control flow or conversions on them, NumPy/math on them, value-dependent shapes; calls to
        same-module functions are followed."""
        tainted = _batched_names(statements, tainted)
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
                    return f"runs a Python loop over a batched value (`{_snippet(code(node.iter))}`)"
                if test is not None and _batched(test, tainted):
                    return f"uses a batched value in Python control flow (`{_snippet(code(test))}`)"
                if isinstance(node, cst.Comparison) and _batched(node, tainted) and any(
                    isinstance(c.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)) for c in node.comparisons
                ):
                    return f"tests a batched value with `in`/`is` (`{_snippet(code(node))}`)"
                if isinstance(node, cst.FormattedString) and _batched(node, tainted):
                    return "formats a batched value into a string"
                if isinstance(node, cst.Subscript):
                    for element in node.slice:
                        part = element.slice
                        if isinstance(part, cst.Slice) and any(
                            b is not None and _batched(b, tainted) for b in (part.lower, part.upper, part.step)
                        ):
                            return f"uses a batched value as a slice bound (`{_snippet(code(node))}`)"
                        if isinstance(part, cst.Index) and _batched(part.value, tainted):
                            if isinstance(part.value, (cst.Comparison, cst.UnaryOperation)) or _has_comparison(part.value):
                                return f"indexes with a boolean mask, whose shape depends on the values (`{_snippet(code(node))}`)"
                            known = self._dataflow().is_array_like(node.value) or self._is_array(node.value)
                            if not known and not _batched(node.value, tainted):
                                return f"indexes something not known to be a JAX array with a batched value (`{_snippet(code(node))}`)"
                if isinstance(node, cst.Call):
                    reason = self._call_blocker(node, tainted, depth)
                    if reason is not None:
                        return reason
        return None

    def _call_blocker(self, call: cst.Call, tainted: set[str], depth: int) -> str | None:
        code = self.context.code_for
        batched_args = [i for i, a in enumerate(call.args) if _batched(a.value, tainted)]
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _CONCRETE_METHODS and _batched(func.value, tainted):
            return f"turns a batched value into a Python value (`{_snippet(code(call))}`)"
        if not batched_args:
            return None
        if isinstance(func, cst.Name) and self.context.names.is_builtin(func, func.value):
            if func.value in _CONCRETE_BUILTINS:
                return f"passes a batched value to `{func.value}()`"
            return None
        qualified = self.context.names.qualified(func)
        if qualified is not None:
            if qualified in _VALUE_SHAPED and not any(a.keyword is not None and a.keyword.value == "size" for a in call.args):
                return f"calls `{code(func)}`, whose result shape depends on the values"
            if qualified == "jax.numpy.where" and len(call.args) == 1:
                return "calls `jnp.where` with one argument, whose result shape depends on the values"
            if self._batched_shape(qualified, call, tainted):
                return f"uses a batched value as a shape or a count (`{_snippet(code(call))}`)"
            if qualified.startswith(_BATCHABLE_PREFIXES):
                return None
            return f"passes a batched value to `{code(func)}`, which does not batch under jax.vmap"
        if isinstance(func, cst.Name):
            definition = self._dataflow().local_function(func)
            if definition is not None:
                if depth >= _MAX_DEPTH:
                    return f"calls `{func.value}` too deeply nested to check"
                if any(call.args[i].keyword is not None or call.args[i].star for i in batched_args):
                    return f"passes a batched value to `{func.value}` by keyword or unpacking"
                positional = [p.name.value for p in (*definition.params.posonly_params, *definition.params.params)]
                names = {positional[i] for i in batched_args if i < len(positional)}
                body = [definition.body] if isinstance(definition, cst.Lambda) else list(body_statements(definition.body))
                inner = self._batch_blocker(body, names, depth + 1)
                return None if inner is None else f"calls `{func.value}`, which {inner}"
        if isinstance(func, cst.Attribute) and func.attr.value in _SHAPE_METHODS:
            return f"uses a batched value as a shape or a count (`{_snippet(code(call))}`)"
        if isinstance(func, cst.Attribute) and _batched(func.value, tainted):
            return None  # a method of a batched array (`x.sum()`): the concrete ones are caught above
        return f"passes a batched value to `{code(func)}`, which is not known to batch under jax.vmap"

    @staticmethod
    def _batched_shape(qualified: str, call: cst.Call, tainted: set[str]) -> bool:
        """Whether `call` passes a batched value where the function takes a shape, a size or a count."""
        if qualified.startswith("jax.random."):
            name = qualified[len("jax.random."):]
            if name not in _RANDOM_SHAPE_POSITION:
                return any(_batched(a.value, tainted) for a in call.args[1:])
            position = _RANDOM_SHAPE_POSITION[name]
            if position is None:
                return False
            return any(
                _batched(a.value, tainted)
                and ((a.keyword is None and i >= position) or (a.keyword is not None and a.keyword.value in ("shape", "num")))
                for i, a in enumerate(call.args)
            )
        if qualified not in _SHAPE_ARGUMENTS:
            return False
        positions, keywords = _SHAPE_ARGUMENTS[qualified]
        return any(
            _batched(a.value, tainted)
            and ((a.keyword is None and (i in positions or a.star)) or (a.keyword is not None and a.keyword.value in keywords))
            for i, a in enumerate(call.args)
        )

    def _expression_impurity(self, expr: cst.BaseExpression, arrays: frozenset[str] = frozenset()) -> str | None:
        dataflow = self._dataflow()
        for node in walk(expr):
            if isinstance(node, cst.Call):
                blocker: Blocker | None = dataflow.call_blocker(node, frozenset(), arrays)
                if blocker is not None:
                    return blocker.reason
        return None

    def _draws_random(self, statements: Sequence[cst.CSTNode], depth: int) -> bool:
        for statement in statements:
            for node in walk(statement):
                if not isinstance(node, cst.Call):
                    continue
                qualified = self.context.names.qualified(node.func)
                if qualified is not None and qualified.startswith("jax.random."):
                    return True
                if isinstance(node.func, cst.Name) and depth < _MAX_DEPTH:
                    definition = self._dataflow().local_function(node.func)
                    if definition is not None:
                        body = [definition.body] if isinstance(definition, cst.Lambda) else list(body_statements(definition.body))
                        if self._draws_random(body, depth + 1):
                            return True
        return False

    # ---- small queries -------------------------------------------------------------------------------------

    def _is_array(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` surely holds one JAX array: the dataflow's evidence, or a name bound once, to a JAX
        function's result (`keys = jax.random.split(key, n)`)."""
        if self._dataflow().is_array_like(expr):
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
        return isinstance(assign, cst.Assign) and len(assign.targets) == 1 and self._dataflow().is_array_like(assign.value)

    def _builtin(self, func: cst.BaseExpression, name: str) -> bool:
        return isinstance(func, cst.Name) and func.value == name and self.context.names.is_builtin(func, name)

    def _statement(self, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
        current = node
        parents = self.context.parents
        while current is not None and not isinstance(current, cst.BaseStatement):
            current = parents.get(current)
        return current if isinstance(current, cst.SimpleStatementLine) else None

    def _in_nested_scope(self, node: cst.CSTNode, statement: cst.CSTNode) -> bool:
        """Whether `node` sits in a lambda or comprehension inside `statement`: a function defined before the
        statement would not see the names that scope binds."""
        current = self.context.parents.get(node)
        while current is not None and current is not statement:
            if isinstance(current, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
                return True
            current = self.context.parents.get(current)
        return False

    def _can_define_before(self, statement: cst.BaseStatement) -> bool:
        """A def can go before a statement of a function body or of the module (not a class body, where the
        function would become a method and its free names would not see the class's)."""
        parent = self.context.parents.get(statement)
        if isinstance(parent, cst.Module):
            return True
        owner = self.context.parents.get(parent)
        while owner is not None and not isinstance(owner, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            owner = self.context.parents.get(owner)
        return isinstance(owner, (cst.FunctionDef, cst.Module))

    def _dataflow(self):
        return self.context.dataflow


# ---- syntax helpers ----------------------------------------------------------------------------------------


def _single_name_assign(statement) -> cst.Assign | None:
    """`name = value` as the only statement of a line."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            return small
    return None



def _mentions(node: cst.CSTNode, names: set[str]) -> bool:
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


def _stack_axis(call: cst.Call, callee: str) -> int | None:
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


def _append_of(statement) -> tuple[str, cst.BaseExpression] | None:
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


def _keep_body_comments(loop: cst.For, spec, pieces: list, moved: list) -> list:
    """`pieces` (the local function if any, then the vmap statement) with `moved` as the first one's leading
    lines and the loop body's comments kept: where a local function holds the body's statements (with their
    own comments), the comments after its last statement end the function as they ended the loop; where the body
    becomes a single call, each of its comment lines and end-of-line comments goes above the new statement."""
    body = loop.body
    if spec.function is not None:
        pieces[0] = pieces[0].with_changes(leading_lines=moved)
        if isinstance(body, cst.IndentedBlock) and body.footer:
            pieces[0] = pieces[0].with_changes(body=pieces[0].body.with_changes(footer=body.footer))
        return pieces
    comments = [
        cst.EmptyLine(comment=node.comment)
        for node in _in_order(body)
        if isinstance(node, (cst.EmptyLine, cst.TrailingWhitespace)) and node is not body.header and node.comment
    ]
    pieces[0] = pieces[0].with_changes(leading_lines=[*moved, *comments])
    return pieces


def _in_order(node: cst.CSTNode):
    """Every node under `node` in the order of the source."""
    yield node
    for child in children(node):
        yield from _in_order(child)


def _simple_assignment(statement) -> str | None:
    """Why a statement before the `.append` cannot move into a local function as is (None: it can): only
    `name = value` lines keep the same meaning there."""
    if isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, cst.Assign) and all(isinstance(t.target, (cst.Name, cst.Tuple)) for t in small.targets)
        for small in statement.body
    ):
        return None
    return "the body has statements other than assignments to names before the `.append`"


def _batched_names(statements: Sequence[cst.CSTNode], tainted: set[str]) -> set[str]:
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


def _tuple_text(axes: Sequence[int | None]) -> str:
    parts = ["None" if axis is None else str(axis) for axis in axes]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _row_names(array: str) -> tuple[str, ...]:
    """Names for one row of `array`: `xs` → `x`, else `array_row`."""
    names = []
    singular = array[:-1]
    if array.endswith("s") and not array.endswith("ss") and singular.isidentifier() and singular not in _BUILTINS:
        names.append(array[:-1])
    names.append(f"{array}_row")
    return tuple(names)


def _index_only(batch) -> bool:
    """A batch that walks a count and no array's rows (`[f(i) for i in range(n)]`): worth a rewrite where the
    index can be traced, but where it cannot (Python branches or list indexing on it) it is host-side
    arithmetic, not a batch, and is left alone without a report."""
    return all(isinstance(array, _Count) for array in batch.arrays)


# ---- the screen ------------------------------------------------------------------------------------------------

_ARRAY_PREFIXES = CORE_ARRAY_NAMESPACES


class _Walks:
    """Over-approximates `_iteration` and `_is_array` (DataflowAnalysis.is_array_like) on `ast`."""

    def __init__(self, screen: Screen) -> None:
        self._screen = screen

    def batch(self, target: ast.expr, iterable: ast.expr, parts: Sequence[ast.AST]) -> bool:
        """Whether `for target in iterable` may walk arrays (or a count) as `_iteration` reads it, with `parts`
        the element and the statements before it."""
        if isinstance(target, ast.Name):
            if _is_call_of(iterable, "range") and len(iterable.args) == 1 and not iterable.keywords:
                bound = iterable.args[0]
                if _is_call_of(bound, "len") and len(bound.args) == 1 and isinstance(bound.args[0], ast.Name):
                    return self.array(bound.args[0])  # `_index_range`: `range(len(xs))` walks the rows of `xs`
                if _shape_zero(bound) is not None:
                    return self.array(_shape_zero(bound))
                if isinstance(bound, ast.Starred) or _short_count(bound):
                    return self.array(iterable)  # no count (`_range_count`): the range itself, no array
                if _may_index_range(bound) or self.array(iterable):
                    return True
                # `range(n)`: a count, no array to prove; unless the index picks items of a list (`_indexes_containers`)
                if self._indexes_containers(target.id, parts):
                    return False
                # or the element is the index itself, no array (`_element_is_array`): over an index alone, no report
                element = parts[-1]
                return not (type(element) is ast.Name and element.id == target.id and not self.array(element))
            return self.array(iterable)
        if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(iterable, ast.Call):
            return False
        if not all(isinstance(e, ast.Name) for e in target.elts) or iterable.keywords:
            return False
        if any(isinstance(a, ast.Starred) for a in iterable.args):
            return False
        if _is_call_of(iterable, "zip") and len(iterable.args) == len(target.elts):
            return all(self.array(a) for a in iterable.args)
        if _is_call_of(iterable, "enumerate") and len(iterable.args) == 1 and len(target.elts) == 2:
            return isinstance(iterable.args[0], ast.Name) and self.array(iterable.args[0])
        return False

    def _indexes_containers(self, index: str, parts: Sequence[ast.AST]) -> bool:
        """Surely `_indexes_containers`: `index` in the subscript of a name that no binding may make an array
        (LibCST's walk sees more names, `obj.i` among them, so it finds at least these)."""
        for part in parts:
            for node in ast.walk(part):
                if type(node) is ast.Subscript and type(node.value) is ast.Name:
                    if any(type(n) is ast.Name and n.id == index for n in ast.walk(node.slice)):
                        if not self.array(node.value):
                            return True
        return False

    def array(self, expr: ast.expr) -> bool:
        """A superset of `is_array_like`: indexing, a call into jax.numpy/nn/random/lax, an array method of
        one, `.at[...]` updates, arithmetic, `.T`, or a name with a binding that may make an array, as either
        of `_name_is_array`'s paths reads it (`array_bindings`)."""
        screen = self._screen
        if isinstance(expr, ast.Subscript):
            return self.array(expr.value)
        if isinstance(expr, ast.Call):
            func = expr.func
            parts = dotted(func)
            if parts is not None and any(q.startswith(_ARRAY_PREFIXES) for q in screen.qualified_names(parts)):
                return True
            if isinstance(func, ast.Attribute):
                if func.attr in AT_METHODS and isinstance(func.value, ast.Subscript):
                    at = func.value.value
                    if isinstance(at, ast.Attribute) and at.attr == "at":
                        return True
                return func.attr in ARRAY_METHODS and self.array(func.value)
            return False
        if isinstance(expr, ast.BinOp):
            return self.array(expr.left) or self.array(expr.right)
        if isinstance(expr, ast.Attribute):
            return expr.attr in ("T", "mT", "real", "imag") and self.array(expr.value)
        if isinstance(expr, ast.Name):
            # any binding but loops, imports, unpacking, containers; and not bound to a container where it is read
            return expr.id in array_bindings(screen) and not screen.binds_container(expr)
        return False


_BLOCKS = {
    ast.Module: ("body",), ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",),
    ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"), ast.While: ("body", "orelse"),
    ast.If: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",), ast.ExceptHandler: ("body",),
    ast.Try: ("body", "orelse", "finalbody"), ast.match_case: ("body",),
    **({ast.TryStar: ("body", "orelse", "finalbody")} if hasattr(ast, "TryStar") else {}),
}  # fmt: skip


_STACKING_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in _STACKING)


def _stack_axis_form(call: ast.Call) -> bool:
    """`_stack_axis` is not None: no argument but the list, and `axis=`."""
    return len(call.args) == 1 and all(k.arg == "axis" for k in call.keywords)


def _statement_blocks(screen: Screen):
    """Every list of statements: the module's, each body, `else`, `finally`, handler and case."""
    for node in screen.nodes_of(*_BLOCKS):
        for field_name in _BLOCKS[type(node)]:
            block = getattr(node, field_name)
            if block:
                yield block


def _row_loop_form(loop: ast.For, last: ast.stmt) -> bool:
    """`for i in range(n): ...; out = out.at[i].set(v)` (`_row_loop`, `row_write`)."""
    iterable = loop.iter
    if not (isinstance(loop.target, ast.Name) and _is_call_of(iterable, "range") and len(iterable.args) == 1):
        return False
    if iterable.keywords or isinstance(iterable.args[0], ast.Starred):
        return False
    if not (type(last) is ast.Assign and len(last.targets) == 1 and type(last.targets[0]) is ast.Name):
        return False
    call = last.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "set"):
        return False
    if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        return False
    at = call.func.value
    if not (isinstance(at, ast.Subscript) and isinstance(at.value, ast.Attribute) and at.value.attr == "at"):
        return False
    base = at.value.value
    first = at.slice.elts[0] if isinstance(at.slice, ast.Tuple) and at.slice.elts else at.slice
    return (
        isinstance(base, ast.Name) and base.id == last.targets[0].id
        and isinstance(first, ast.Name) and first.id == loop.target.id
    )


def _assigns_call(statement: ast.stmt, name: str) -> bool:
    return (
        type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name
        and statement.targets[0].id == name and isinstance(statement.value, ast.Call)
    )


def _appends_to(statement: ast.stmt) -> str | None:
    """`ys` of a statement `ys.append(e)` (`_append_of`)."""
    call = statement.value if type(statement) is ast.Expr else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append"):
        return None
    if not isinstance(call.func.value, ast.Name) or len(call.args) != 1 or call.keywords:
        return None
    return None if isinstance(call.args[0], ast.Starred) else call.func.value.id


def _empties(statement: ast.stmt | None, name: str) -> bool:
    """`name = []` (`_creation`)."""
    return (
        type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name
        and statement.targets[0].id == name and type(statement.value) is ast.List and not statement.value.elts
    )


def _is_list_of_map(expr: ast.expr) -> bool:
    """`list(map(f, xs, ...))`, map with no keyword or starred argument (`_batch`)."""
    if not (_is_call_of(expr, "list") and len(expr.args) + len(expr.keywords) == 1):
        return False
    inner = _mapped(expr)
    return (
        _is_call_of(inner, "map") and len(inner.args) >= 2 and not inner.keywords
        and not any(isinstance(a, ast.Starred) for a in inner.args)
    )


def _mapped(expr: ast.Call) -> ast.Call:
    return expr.args[0] if expr.args else expr.keywords[0].value


def _is_call_of(expr: ast.expr, name: str) -> bool:
    """A call of the builtin `name` as the matcher's `_builtin` sees it: a bare name (a local of that name aside)."""
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == name


def _short_count(bound: ast.expr) -> bool:
    """A literal count under `_SHORT`, which `_range_count` leaves a Python loop."""
    return type(bound) is ast.Constant and type(bound.value) is int and bound.value < _SHORT


def _may_index_range(bound: ast.expr) -> bool:
    """A bound `_index_range` may read as the rows of an array: a `len` call, a `.shape[...]`."""
    if _is_call_of(bound, "len"):
        return True
    return type(bound) is ast.Subscript and type(bound.value) is ast.Attribute and bound.value.attr == "shape"


def _shape_zero(expr: ast.expr) -> ast.Name | None:
    """`xs` of `xs.shape[0]` (`_index_range`)."""
    if (
        isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape"
        and isinstance(expr.value.value, ast.Name) and isinstance(expr.slice, ast.Constant) and expr.slice.value == 0
        and not isinstance(expr.slice.value, bool)
    ):
        return expr.value.value
    return None
